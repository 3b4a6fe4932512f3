"""The arbiter: physical events and time in, game facts out (pure: no I/O, no clock reads).

Start with ``state`` (the theory of operation, the named states and the one table of their
transitions). ``engine`` is the public face (``Arbiter``) and reads the board between two
moves; ``game`` is the state the collaborators share. The collaborators: ``touch`` (Article 4:
touches, releases, castling, promotion), ``irregular`` (clock presses and Article 7),
``press`` (what a press completes on the whole board), ``recovery`` (moves made while nobody
listened), ``clock``, ``bursts`` (one scan of the board: simultaneous touches, knocks),
``centre`` (the kings in the centre, a result), ``judge`` (what a board shows; the end of the
game), ``dead`` (dead positions by a pawn blockade), ``positions`` (what a move changes, which
move the squares show), ``rules`` (the editions as data), ``alerts`` (the words of each alert),
``facts`` (what the engine concludes).
"""
