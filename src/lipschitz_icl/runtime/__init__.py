"""How computations run: cached on disk, and spread over processes or a Dask cluster.

===========  ===================================================================================================
``cache``    the on-disk cache (content-addressed JSON records; imports nothing of the engine)
``memo``     the engine's ``w*`` and ICL loss through the cache (the engine never imports the cache)
``trained``  trained layers through the cache, keyed by the training design: trained once, shared by claims
``sweep``    independent pieces of a sweep, run serially or on a Dask cluster, bit-identical either way
===========  ===================================================================================================
"""
