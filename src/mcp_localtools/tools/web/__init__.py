"""The web group: httpget (a URL fetched under the ``[web]`` network policy).

One module per tool, named for it and listed in ``tools.GROUPS``; each exposes ``spec(workspace)``.
"""
