"""The image group: readimage (metadata, and image content sized for a model).

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes ``spec(workspace)``.
"""
