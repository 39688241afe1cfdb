"""The Hvpa resource (`autoscaling.k8s.io/v1alpha1`): typed spec and status, defaults, validation."""
