"""sitegen: turn coding-agent sessions into HTML people can read, browse, search and share."""

__version__ = "0.1.0"
__all__ = ["__version__"]
