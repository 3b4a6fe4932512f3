"""The table process: the daemon (engine, publisher, commands), the board supervisor, sd_notify."""
