"""The simulated cluster behind `hvpa sim`: an in-process Kubernetes API over HTTP and a workload model."""
