"""trayburn: what the Cline CLI and the editor apps' tasks cost you, at a glance. This module holds only the
version; it imports nothing, so reading the version costs nothing.
"""

__version__ = "0.4.0.dev0"
