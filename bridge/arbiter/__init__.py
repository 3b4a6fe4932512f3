"""The arbiter: physical events and time in, game facts out (pure: no I/O, no clock reads).

``engine`` holds the state and the transitions, with ``irregular`` (its part that judges clock
presses and boards the game does not explain); ``judge`` the stateless judgements of the Laws,
``press`` what a press completes on the whole board, ``bursts`` the events of one scan of the
board (simultaneous touches, knocks), ``dead`` dead positions by a pawn blockade, ``positions``
what a move changes on the board, ``rules`` the editions as data, ``alerts`` the words of each
alert, ``facts`` what the engine concludes.
"""
