"""Batch jobs over question banks: the stages (``stages``) and the Ray engine (``ray_engine``); the job
machinery itself is ``mathgraph.batch_jobs``."""
