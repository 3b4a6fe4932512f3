"""The arbiter: physical events and time in, game facts out (pure: no I/O, no clock reads).

``engine`` holds the state and the transitions, ``judge`` the stateless judgements of the Laws,
``positions`` what a move changes on the board, ``rules`` the editions as data, ``facts`` what
the engine concludes.
"""
