"""Where calls come from: each source behind the `base.Source` interface (see docs/ARCHITECTURE.md)."""
