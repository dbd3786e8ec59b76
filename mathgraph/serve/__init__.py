"""``mathgraph serve``: the toolkit as a local web service (``app``) and page (``static``).

``Service`` (``service``) loads the models once; ``create_app`` (``app``) serves them. Both need the
``serve`` extra (FastAPI and uvicorn): ``pip install "mathgraph[serve]"``.
"""
