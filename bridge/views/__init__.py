"""Views of the tables: a pure model of each table's game, its rendering, and the watch shell."""
