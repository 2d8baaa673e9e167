"""trayburn: what the Cline CLI costs you, at a glance."""

__version__ = "0.3.0"
