"""Tournament tables on an MQTT broker: each arbiter publishes its public game.

The game journals are the outbox: events are derived from them with a
per-table sequence number, published in order with QoS 1, and a durable
cursor marks what the broker acknowledged. Nothing here runs on the verdict
path. See docs/tournament/mqtt.md for the topics and payloads.
"""
