"""The host: the ACL API a host program calls, and the host-side helpers around it.

``acl`` is the API, shaped like pyACL (``acl.rt.malloc``, ``acl.rt.memcpy_async``, ...), with the real error
codes of ``acl_codes``; ``checks`` is what every call checks of its arguments and state; ``call_log`` feeds
many host calls to the device at a fraction of the cost of each (the runtime's fast mode); ``stream_manager``
and ``dynamic_shapes`` are the seed's host-side helpers (a multi-stream task helper; shape history, tiling
cache and an adaptive policy).
"""
