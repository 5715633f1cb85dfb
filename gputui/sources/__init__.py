"""gputui.sources: where cluster data comes from (no textual here).

Entry points (``gputui.sources.connect``):

* ``open_source(settings)`` -> :class:`~gputui.sources.kube.KubeSource`, the live
  list+watch source the TUI starts with ``start(on_snapshot, on_status)`` (demo mode starts
  the emulated cluster and connects to it through a kubeconfig like any cluster);
* ``read_snapshot(settings)`` -> one ``ClusterSnapshot`` for ``gputui check``.

Both raise :class:`~gputui.sources.errors.SourceError` (one line) for a kubeconfig or
context that cannot be used.
"""
