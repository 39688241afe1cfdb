"""Everything that talks to the API server: client, reflector, store, work queue, leader election, writes."""
