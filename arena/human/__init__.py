"""A seat played by the person at the terminal (``arena play VARIANT human BOT ...``).

The person's seat is a bot like any other to the referee: a process of ours (``python -m arena.human``)
that connects to the seat's gate over loopback with the seat's token, says hello and answers requests
through the protocol (the client library's ``Bot``), so the game is refereed, clocked and recorded
exactly as between bots.  It shows what that seat may see and nothing more, read from the messages the
seat receives (SPEC 3 to 6): the request's observation, the public events and ``new_game``.

- ``commands``: the short, forgiving moves a person types (``d``, ``p``, ``m 7H 8H 9H``, ``l 9H 2``,
  ``x 5C`` ...), parsed into protocol actions; pure.
- ``screen``: the table as that seat sees it, drawn in 80x24 (and without colour under ``NO_COLOR``); pure.
- ``seat``: the process: the prompt (prompt_toolkit, with tab completion of cards), hints from the
  built-in greedy policy, the loop over requests.
"""

LEFT_EXIT = 3  # the seat's exit code when the person left (quit, Ctrl-D, Ctrl-C): recorded as a forfeit
