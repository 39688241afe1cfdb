"""hvpa: horizontal and vertical pod autoscaling in tandem, from one decision."""

__version__ = "0.1.0"
