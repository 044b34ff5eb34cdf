"""loader: a declarative bulk loader for the Institution Data Service."""

__version__ = "0.1.0"
