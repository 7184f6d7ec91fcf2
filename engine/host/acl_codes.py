"""ACL constants and error codes with their real numbers (``hicann/runtime`` acl headers).

pyACL returns these integers; the simulator does the same and, beside the number, records a
message naming what was wrong (the real runtime writes it to its log).
"""

from __future__ import annotations

from types import MappingProxyType

ACL_SUCCESS = 0

# acl_base.h / acl_rt.h error codes
ACL_ERROR_INVALID_PARAM = 100000
ACL_ERROR_UNINITIALIZE = 100001
ACL_ERROR_REPEAT_INITIALIZE = 100002
ACL_ERROR_REPEAT_FINALIZE = 100037
ACL_ERROR_BAD_ALLOC = 200000
ACL_ERROR_API_NOT_SUPPORT = 200001
ACL_ERROR_INVALID_DEVICE = 200002
ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003
ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005
ACL_ERROR_STORAGE_OVER_LIMIT = 300000
ACL_ERROR_INTERNAL_ERROR = 500000
ACL_ERROR_FAILURE = 500001
ACL_ERROR_RT_PARAM_INVALID = 107000
ACL_ERROR_RT_INVALID_DEVICEID = 107001
ACL_ERROR_RT_CONTEXT_NULL = 107002
ACL_ERROR_RT_STREAM_CONTEXT = 107003
ACL_ERROR_RT_TASK_TIMEOUT = 107020
ACL_ERROR_RT_MEMORY_ALLOCATION = 207001
ACL_ERROR_RT_MEMORY_FREE = 207002
ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007
ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008
ACL_ERROR_RT_STREAM_TASK_FULL = 507002
ACL_ERROR_RT_AICORE_TIMEOUT = 507014
ACL_ERROR_RT_AICORE_EXCEPTION = 507015
ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042
ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043
ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046
ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047

# aclnn return codes (the CANN operator API reference's "aclnn返回码" page; the operators' docs list the same:
# 161001 a null pointer argument, 161002 an invalid argument, 561103 an inner null pointer, e.g. the executor)
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER_NULLPTR = 561103

# aclrtMemMallocPolicy
ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEM_MALLOC_HUGE_ONLY = 1
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEM_MALLOC_HUGE_FIRST_P2P = 3
ACL_MEM_MALLOC_HUGE_ONLY_P2P = 4
ACL_MEM_MALLOC_NORMAL_ONLY_P2P = 5
MALLOC_POLICIES = frozenset(range(6))

# aclrtMemcpyKind
ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_MEMCPY_DEVICE_TO_DEVICE = 3
ACL_MEMCPY_DEFAULT = 4
MEMCPY_KIND_NAMES = MappingProxyType(
    {
        ACL_MEMCPY_HOST_TO_HOST: "ACL_MEMCPY_HOST_TO_HOST",
        ACL_MEMCPY_HOST_TO_DEVICE: "ACL_MEMCPY_HOST_TO_DEVICE",
        ACL_MEMCPY_DEVICE_TO_HOST: "ACL_MEMCPY_DEVICE_TO_HOST",
        ACL_MEMCPY_DEVICE_TO_DEVICE: "ACL_MEMCPY_DEVICE_TO_DEVICE",
        ACL_MEMCPY_DEFAULT: "ACL_MEMCPY_DEFAULT",
    }
)

ERROR_NAMES = MappingProxyType(
    {
        value: name
        for name, value in globals().items()
        if name.startswith(("ACL_ERROR_", "ACLNN_ERR_")) or name == "ACL_SUCCESS"
    }
)


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"ACL error {code}")


class AclError(Exception):
    """An ACL call failed: ``code`` is the real ACL number, the message says what was wrong, ``message_zh``
    the same in Chinese (required: every raise site writes both from the same facts, API names, numbers and
    file:line kept as they are; the finding shows the one of the UI's language)."""

    def __init__(self, code: int, message: str, message_zh: str, reported: bool = False):
        super().__init__(f"{error_name(code)} ({code}): {message}")
        self.code = code
        self.detail = message
        self.detail_zh = message_zh
        self.reported = reported  # already a finding of its own (a deadlock diagnosis): do not repeat it
