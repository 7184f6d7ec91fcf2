"""The device and its streams: what runs the tasks a host submits.

``runtime`` executes streams' tasks on copy engines and AI cores (``stream_scheduler`` decides when a task
starts, ``task_store`` keeps every task as columns, ``runtime_stamp`` is the fast mode that stamps repeating
state ahead); ``stream`` holds streams, events and tasks; ``copy_engine`` the DMA engines and the host link's
cost; ``core_array`` the AI cores as the runtime grants them to kernels; ``memory`` global memory (HBM) and
host memory as ACL hands them out; ``op_matmul`` the library matmul operator; ``deadlock`` explains who waits
for whom when nothing is left to run.
"""
