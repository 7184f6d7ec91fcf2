"""The C++ (Ascend C) view's labels and the mapping table's notes (what the simulator's Python does differently
from CANN), in English and Chinese: part of the one catalogue of :mod:`app.present.messages`."""

from __future__ import annotations

from types import MappingProxyType

CPP = MappingProxyType(
    {
        "cpp.title": ("C++ (Ascend C)", "C++（Ascend C）"),
        "cpp.python": ("Python", "Python 代码"),
        "cpp.of_file": ("{file} in C++", "{file} 的 C++"),
        "cpp.no_line": ("This event has no line of code: nothing to translate.", "该事件没有对应的代码行，无可翻译。"),
        "cpp.no_cpp": (
            "Line {line} has no C++ of its own (a blank line, a comment or `pass`).",
            "第 {line} 行没有对应的 C++（空行、注释或 `pass`）。",
        ),
        "cpp.unavailable": ("The source of this file is not available.", "无法读取该文件的源代码。"),
        "cpp.parse_error": ("The file does not parse ({why}): no C++.", "该文件无法解析（{why}），没有 C++。"),
        "cpp.notes": ("How CANN differs", "与 CANN 的差异"),
        "cpp.about": (
            "Generated line by line from the Python by one mapping table: API calls in their ACL / Ascend C form "
            "with the real argument order, plain Python as its nearest C++. A reading aid, not a compiled program.",
            "由同一张映射表逐行从 Python 生成：API 调用写成 ACL / Ascend C 的形式并保持真实的参数顺序，普通 Python "
            "写成最接近的 C++。仅供对照阅读，不是可编译的程序。",
        ),
        "cpp.whole": ("Whole program in Ascend C", "完整程序（Ascend C）"),
        "cpp.whole_title": ("Lesson {n}: the whole program in C++ (Ascend C)", "第 {n} 课：完整程序的 C++（Ascend C）"),
        "cpp.whole_intro": (
            "The lesson's reference solution and the code it runs with (the kernel and the host program), each "
            "file's functions that the lesson's run executes, rendered the same way as the C++ view.",
            "本课参考答案及其运行所需的代码（核函数与主机程序）：每个文件中本课运行时执行到的函数，"
            "按 C++ 视图的同一方式呈现。",
        ),
        "cpp.whole_file": ("from {file}", "来自 {file}"),
        "cpp.whole_hide": ("Hide the whole program", "隐藏完整程序"),
        "cpp.toggle": (
            "show the C++ (Ascend C) of the code / the Python again",
            "显示代码的 C++（Ascend C）/ 切回 Python",
        ),
        "cpp.short": ("C++", "C++ 代码"),
        "cpp.whole_key": ("the lesson's whole program in C++ (Ascend C)", "本课完整程序的 C++（Ascend C）"),
        "cpp.no_lesson": ("A scenario has no lesson program: open a lesson.", "场景没有课程程序：请打开一节课。"),
        # the mapping table's notes (app.present.cpp.table: Entry.note)
        "cpp.note.out_param": (
            "pyACL returns (value, ret); the C function writes the value through its first pointer argument and "
            "returns the aclError.",
            "pyACL 返回 (value, ret)；C 函数通过第一个指针参数写回结果，返回值为 aclError。",
        ),
        "cpp.note.launch": (
            "The simulator launches with acl.rt.launch_kernel(kernel, block_dim, stream, *args). C++ uses the "
            "<<<blockDim, l2ctrl, stream>>> launch, which returns nothing (read errors with aclrtGetLastError). "
            "pyACL's own acl.rt.launch_kernel(funcHandle, blockDim, argsData, argsSize, stream) is aclrtLaunchKernel: "
            "a function handle and the arguments packed in device memory. pyasc launches with kernel[block_dim, "
            "stream](args).",
            "模拟器用 acl.rt.launch_kernel(kernel, block_dim, stream, *args) 启动核函数。C++ 使用 <<<blockDim, "
            "l2ctrl, stream>>> 内核调用符，它没有返回值（错误用 aclrtGetLastError 读取）。pyACL 自己的 "
            "acl.rt.launch_kernel(funcHandle, blockDim, argsData, argsSize, stream) 对应 aclrtLaunchKernel："
            "传入函数句柄和放在设备内存中的参数。pyasc 用 kernel[block_dim, stream](args) 启动。",
        ),
        "cpp.note.numpy_ptr": (
            "pyACL moves between numpy arrays and host pointers (acl.util); in C++ host memory is a pointer you "
            "read and write directly.",
            "pyACL 用 acl.util 在 numpy 数组和主机指针之间转换；C++ 中主机内存就是指针，直接读写。",
        ),
        "cpp.note.op_matmul": (
            "The simulator's acl.op.matmul (a library matmul on device pointers) stands for CANN's two-phase aclnn "
            "call: aclnnMatmulGetWorkspaceSize with aclTensor descriptors (aclCreateTensor), then aclnnMatmul on the "
            "stream.",
            "模拟器的 acl.op.matmul（基于设备指针的库矩阵乘）对应 CANN 的两段式 aclnn 调用：先用 aclTensor 描述"
            "（aclCreateTensor）调用 aclnnMatmulGetWorkspaceSize，再在流上调用 aclnnMatmul。",
        ),
        "cpp.note.error_name": (
            "ACL has no function that names an error code; aclGetRecentErrMsg() returns the message of the most "
            "recent error.",
            "ACL 没有把错误码转成名字的函数；aclGetRecentErrMsg() 返回最近一次错误的描述。",
        ),
        "cpp.note.jit": (
            "@asc.jit(kernel_type=...) marks a kernel as pyasc does; C++ declares it __global__ __aicore__ and sets "
            "its type with KERNEL_TASK_TYPE_DEFAULT.",
            "@asc.jit(kernel_type=...) 与 pyasc 一样标记核函数；C++ 用 __global__ __aicore__ 声明，并用 "
            "KERNEL_TASK_TYPE_DEFAULT 设置核函数类型。",
        ),
        "cpp.note.kernel_args": (
            "A kernel's parameters are GM pointers (GM_ADDR) or scalars; a struct such as a tiling reaches the "
            "kernel through GM and is read with GET_TILING_DATA.",
            "核函数的参数只能是 GM 指针（GM_ADDR）或标量；tiling 之类的结构体经 GM 传入，用 GET_TILING_DATA 读取。",
        ),
        "cpp.note.gm_address": (
            "asc.GlobalAddress carries a device pointer and its element type; C++ passes the pointer (GM_ADDR) and "
            "the kernel casts it to its element type in SetGlobalBuffer.",
            "asc.GlobalAddress 携带设备指针及其元素类型；C++ 只传指针（GM_ADDR），核函数在 SetGlobalBuffer 中转换为"
            "元素类型。",
        ),
        "cpp.note.shape": (
            "alloc_tensor(dtype, shape=(rows, cols)): the 2-D shape is the simulator's record of the tile for its "
            "views; an Ascend C LocalTensor is one-dimensional.",
            "alloc_tensor(dtype, shape=(rows, cols))：二维形状只是模拟器为视图记录的分块形状；Ascend C 的 "
            "LocalTensor 是一维的。",
        ),
        "cpp.note.reshape": (
            "LocalTensor.reshape(rows, cols) is the simulator's 2-D view of the same buffer; in Ascend C the tensor "
            "stays 1-D and the copy's parameters carry the shape.",
            "LocalTensor.reshape(rows, cols) 是模拟器对同一缓冲区的二维视图；Ascend C 中张量仍是一维，形状由搬运"
            "参数描述。",
        ),
        "cpp.note.tile_view": (
            "x.tile(row, col, rows, cols[, row_stride]) is the simulator's 2-D tile view; in Ascend C it is the "
            "tensor at the tile's first element, and the copy's parameter struct carries rows, columns and strides.",
            "x.tile(row, col, rows, cols[, row_stride]) 是模拟器的二维分块视图；Ascend C 中它是从分块首元素开始的"
            "张量，行数、列数和步长由搬运的参数结构体描述。",
        ),
        "cpp.note.nd2nz": (
            "GM -> L1 with the ND -> NZ conversion: Nd2NzParams {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, "
            "dstNzC0Stride, dstNzNStride, dstNzMatrixStride}, the same fields in the same order (the simulator models "
            "ndNum 0 or 1 and dstNzNStride 1).",
            "GM -> L1 并做 ND -> NZ 转换：Nd2NzParams {ndNum, nValue, dValue, srcNdMatrixStride, srcDValue, "
            "dstNzC0Stride, dstNzNStride, dstNzMatrixStride}，字段与顺序相同（模拟器只模拟 ndNum 为 0 或 1、"
            "dstNzNStride 为 1）。",
        ),
        "cpp.note.load_data": (
            "L1 -> L0A/L0B: LoadData2DParams {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode} "
            "moves whole 512-byte fractals: one call per row of fractals makes A's ZZ from its NZ, a transposing call "
            "per row makes B's ZN (CANN's matmul_basic_api sample on the 910B).",
            "L1 -> L0A/L0B：LoadData2DParams {startIndex, repeatTimes, srcStride, sid, dstGap, ifTranspose, addrMode} "
            "搬运整块 512 字节的分形：每行分形一次调用，把 A 的 NZ 变成 ZZ；每行一次带转置的调用，把 B 变成 ZN"
            "（CANN 的 matmul_basic_api 样例在 910B 上的写法）。",
        ),
        "cpp.note.load3d": (
            "L1 -> L0A/L0B in one call: LoadData3DParamsV2 used as a matmul load (a 1 x 1 filter over one row: l1H 1, "
            "l1W the NZ matrix's rows, channelSize its columns) makes ZZ in L0A and ZN in L0B, as CANN's "
            "matmul_basic_api_high_performance sample does on the 910B; the simulator models only that use.",
            "一次调用完成 L1 -> L0A/L0B：把 LoadData3DParamsV2 当作矩阵载入使用（1 x 1 卷积核、只有一行：l1H 为 1，"
            "l1W 为 NZ 矩阵的行数，channelSize 为它的列数），在 L0A 中得到 ZZ、在 L0B 中得到 ZN，与 CANN 的 "
            "matmul_basic_api_high_performance 样例在 910B 上的写法相同；模拟器只模拟这种用法。",
        ),
        "cpp.note.fixpipe": (
            "Fixpipe L0C (NZ) -> GM with FixpipeParamsV220 {nSize, mSize, srcStride, dstStride, reluEn, quantPre, "
            "deqScalar, ndNum, srcNdStride, dstNdStride, unitFlag}; the config template argument CFG_ROW_MAJOR (the "
            "default) converts NZ to ND on the way, CFG_NZ keeps NZ.",
            "Fixpipe 从 L0C（NZ）搬到 GM，参数为 FixpipeParamsV220 {nSize, mSize, srcStride, dstStride, reluEn, "
            "quantPre, deqScalar, ndNum, srcNdStride, dstNdStride, unitFlag}；模板参数 config 为 CFG_ROW_MAJOR"
            "（默认）时在途中把 NZ 转成 ND，为 CFG_NZ 时保持 NZ。",
        ),
        "cpp.note.mmad": (
            "Mmad(dst, fm, filter, MmadParams {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal}): fm in L0A as ZZ, "
            "filter in L0B as ZN, dst in L0C as NZ; cmatrixInitVal true starts C at 0 (C = A x B), false "
            "accumulates (C += A x B).",
            "Mmad(dst, fm, filter, MmadParams {m, n, k, unitFlag, cmatrixSource, cmatrixInitVal})：fm 在 L0A 中为 ZZ，"
            "filter 在 L0B 中为 ZN，dst 在 L0C 中为 NZ；cmatrixInitVal 为 true 时 C 从 0 开始（C = A x B），为 false "
            "时累加（C += A x B）。",
        ),
        "cpp.note.data_copy_pad": (
            "DataCopyPad takes DataCopyExtParams {blockCount, blockLen (bytes), srcStride, dstStride, rsv}; from GM "
            "it also takes DataCopyPadExtParams {isPad, leftPadding, rightPadding, paddingValue}. The simulator's "
            "data_copy_pad(dst, src, count) is one block of count elements.",
            "DataCopyPad 的参数为 DataCopyExtParams {blockCount, blockLen（字节）, srcStride, dstStride, rsv}；从 GM "
            "搬入时还有 DataCopyPadExtParams {isPad, leftPadding, rightPadding, paddingValue}。模拟器的 "
            "data_copy_pad(dst, src, count) 相当于一个 count 个元素的数据块。",
        ),
        "cpp.note.cross_core": (
            "Ascend C takes the mode and pipe as template parameters (CrossCoreSetFlag<modeId, pipe>(flagId)); the "
            "simulator takes them as arguments and models mode 2 only (AIC <-> AIV of one AI core).",
            "Ascend C 的模式和流水线是模板参数（CrossCoreSetFlag<modeId, pipe>(flagId)）；模拟器把它们作为普通参数，"
            "并且只模拟模式 2（同一 AI Core 内 AIC <-> AIV）。",
        ),
        "cpp.note.mix_if": (
            "if ASCEND_IS_AIC { ... }: the macro CANN's mixed kernels branch on (the simulator's asc.ascend_is_aic()).",
            "if ASCEND_IS_AIC { ... }：CANN 混合核函数用这个宏区分 Cube 与 Vector（模拟器中为 asc.ascend_is_aic()）。",
        ),
        "cpp.note.device_tiling": (
            "A helper of the simulator's (engine/aicore/tiling.py), not an Ascend C API. Ascend C computes the "
            "tiling on the host: the host's tiling function fills a TilingData struct that the kernel reads with "
            "GET_TILING_DATA.",
            "这是模拟器的辅助函数（engine/aicore/tiling.py），不是 Ascend C API。Ascend C 在主机侧计算 tiling："
            "主机的 tiling 函数填写 TilingData 结构体，核函数用 GET_TILING_DATA 读取。",
        ),
        "cpp.note.tiling_data": (
            "Ascend C declares TilingData with macros, BEGIN_TILING_DATA_DEF(Name), TILING_DATA_FIELD_DEF(type, "
            "field) ... END_TILING_DATA_DEF, and the host's tiling function fills it with tiling.set_field(v) and "
            "SaveToBuffer; the simulator's class of Field(...) lines is the same struct (engine/host/tiling_data.py).",
            "Ascend C 用宏声明 TilingData：BEGIN_TILING_DATA_DEF(Name)、TILING_DATA_FIELD_DEF(type, field) …… "
            "END_TILING_DATA_DEF，主机的 tiling 函数用 tiling.set_field(v) 和 SaveToBuffer 填写；模拟器中由 Field(...) "
            "组成的类就是同一个结构体（engine/host/tiling_data.py）。",
        ),
        "cpp.note.get_tiling_data": (
            "GET_TILING_DATA(t, tiling) copies the launch's TilingData from GM to the core's stack; the kernel's "
            "tiling parameter is the struct's GM address (GM_ADDR tiling).",
            "GET_TILING_DATA(t, tiling) 把本次下发的 TilingData 从 GM 拷贝到核的栈上；核函数的 tiling 参数是该结构体的 "
            "GM 地址（GM_ADDR tiling）。",
        ),
        "cpp.note.tiling_key": (
            "TILING_KEY_IS(k) picks a variant compiled into the kernel's binary for the key the host set with "
            "context->SetTilingKey(k); the simulator evaluates it at run time and refuses a key the kernel did not "
            "declare (@asc.jit(tiling_keys=...)).",
            "TILING_KEY_IS(k) 选择核函数二进制中为主机用 context->SetTilingKey(k) 设置的 key 编译的那个变体；"
            "模拟器在运行时求值，并拒绝核函数未声明的 key（@asc.jit(tiling_keys=...)）。",
        ),
        "cpp.note.sim_helper": (
            "A helper of the simulator's, not a CANN API: on hardware this is your own C++ code.",
            "这是模拟器的辅助函数，不是 CANN API：在真实硬件上需要自己用 C++ 编写。",
        ),
        "cpp.note.sim_only": (
            "The simulator's own instruction (extra scalar work or a trace mark); nothing in Ascend C corresponds.",
            "这是模拟器自己的指令（额外的标量开销或追踪标记），Ascend C 中没有对应。",
        ),
        "cpp.note.fast_path": (
            "A kernel's fast path is the simulator's: the same program recorded once and stamped; a real kernel has "
            "only its own code.",
            "核函数的快速路径是模拟器的机制：同一程序录制一次后批量复制；真实的核函数只有它自己的代码。",
        ),
        "cpp.note.tcube": (
            "TCubeTiling's field names are CANN's; on the host CANN fills it with matmul_tiling::MultiCoreMatmulTiling "
            "(SetDim, SetShape, SetFixSplit, GetTiling) or field by field.",
            "TCubeTiling 的字段名与 CANN 相同；CANN 在主机侧用 matmul_tiling::MultiCoreMatmulTiling（SetDim、"
            "SetShape、SetFixSplit、GetTiling）或逐个字段填写。",
        ),
        "cpp.note.matmul_obj": (
            "Ascend C declares the Matmul object with its A, B and C types (MatmulType<TPosition::GM, CubeFormat::ND, "
            "half> ...) and registers it with REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling); the "
            "simulator's Matmul(pipe, tiling) does both.",
            "Ascend C 用 A、B、C 的类型（MatmulType<TPosition::GM, CubeFormat::ND, half> ...）声明 Matmul 对象，并用 "
            "REGIST_MATMUL_OBJ(&pipe, GetSysWorkSpacePtr(), mm, &tiling) 注册；模拟器的 Matmul(pipe, tiling) 一次完成"
            "两步。",
        ),
        "cpp.note.auto_tiling": (
            "auto_tiling is the simulator's host tiling search; it stands for "
            "matmul_tiling::MultiCoreMatmulTiling::GetTiling.",
            "auto_tiling 是模拟器在主机侧的 tiling 搜索，对应 matmul_tiling::MultiCoreMatmulTiling::GetTiling。",
        ),
    }
)

__all__ = ("CPP",)
