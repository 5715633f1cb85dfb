"""gputui.sources: where cluster data comes from (no textual here).

Entry points (``gputui.sources.connect``):

* ``open_source(settings)`` -> :class:`~gputui.sources.kube.KubeSource`, the live
  list+watch source the TUI starts with ``start(on_snapshot, on_status)``;
* ``read_snapshot(settings)`` -> one ``ClusterSnapshot`` for ``gputui check``.

Both raise :class:`~gputui.sources.errors.SourceError` (one line) for a kubeconfig or
context that cannot be used. Demo mode is wired above this package: :mod:`gputui.demo`
starts the emulated cluster and connects to it through its kubeconfig like any cluster;
nothing here imports :mod:`gputui.sim` (the layering test holds it to that).
"""
