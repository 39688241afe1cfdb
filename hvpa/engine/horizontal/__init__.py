"""The horizontal axis: upstream HPA semantics (replica calculator, behavior) and cluster-proportional replicas."""
