"""The MQTT side: the broker session, the durable outbox and the table's publisher (I/O)."""
