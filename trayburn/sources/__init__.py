"""Where calls come from: each source behind the `base.Source` interface (see docs/ARCHITECTURE.md). Never
writes the ledger itself: a source hands its sessions and calls to the ledger's `Writer`.
"""
