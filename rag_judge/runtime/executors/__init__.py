"""How a job's model calls are carried out: in process (the default), through a Batch API in
stages over the response cache, or across a Ray cluster."""
