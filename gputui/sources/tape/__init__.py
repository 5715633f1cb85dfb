"""Recordings ("tapes"): ``gputui --record`` writes one, ``gputui replay`` and ``check --replay``
read one back.

One package for everything a recording is, so a newcomer finds it under one name:

* :mod:`~gputui.sources.tape.format`: the file format (frames, limits, hostile-file checks);
  :mod:`~gputui.sources.tape.objects`, :mod:`~gputui.sources.tape.health` and
  :mod:`~gputui.sources.tape.metrics`: how the cluster's input, a node's GPU health and the
  metrics readings are held in it;
* :mod:`~gputui.sources.tape.recorder`: where a session is recorded and how the recorder is
  tapped into the live feeds; :mod:`~gputui.sources.tape.writer` writes the file;
* :mod:`~gputui.sources.tape.reader`: reads it back, the input as of any recorded moment;
  :mod:`~gputui.sources.tape.cost` says what a move between two moments costs a builder;
* :mod:`~gputui.sources.tape.source`: ``gputui replay``'s source over a reader, with warm
  builders parked across the recording by :mod:`~gputui.sources.tape.pool`.

The replay's cursor (play, pause, step) is domain: :mod:`gputui.domain.replay_cursor`.
The frozen scenarios the UI tests load are not recordings of this kind: they live with the
tests (``tests/fixtures/recordings.py``).
"""
