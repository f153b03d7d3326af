"""The referee side: everything between the pure engine and a bot process.

- ``launch``: a bot's compartment (process, sandbox, limits watcher, logs, killing everything);
- ``sandbox``: the bubblewrap command line a compartment runs under;
- ``gate``: the process beside a ZeroMQ bot that holds its socket (a script: standard library and pyzmq only);
- ``channel``: the referee's end of a compartment's pipes, bounded both ways;
- ``host``: launching bots, the handshake, and moving their messages (knows nothing of games);
- ``game``: one game between bots (``Referee``, ``play_one``, ``write_record``);
- ``compliance``: ``arena check-bot``.

Imports point down that list's reverse: ``game`` uses ``host``, which uses ``launch`` and ``channel``;
nothing here is imported by ``arena.rules``.
"""
