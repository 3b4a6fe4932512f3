"""The wire format (pure): MQTT payloads and topics, arbiter commands, the configuration file."""
