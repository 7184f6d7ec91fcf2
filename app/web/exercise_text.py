"""The Exercise panel's words, in English and Chinese (the statuses keep their English keyword first, so a
script finds ``queued``, ``running``, ``judging``, ``done`` in either language)."""

from __future__ import annotations

TEXT = {  # key -> (English, Chinese)
    "run": ("Run & check", "运行并检查"),
    "cancel": ("Cancel", "取消"),
    "queued": ("queued: {ahead} ahead", "queued 排队中：前面还有 {ahead} 个"),
    "running": (
        "running your code in the sandbox: {s} s of at most {limit} s",
        "running 正在沙箱中运行你的代码：已 {s} 秒，最多 {limit} 秒",
    ),
    "judging": ("judging: replaying what your code recorded", "judging 评判中：重放你的代码记录的调用"),
    "replayed": (
        "judging: {done} of {total} host calls replayed, {events} events so far",
        "judging 评判中：已重放 {done}/{total} 个主机调用，已有 {events} 个事件",
    ),
    "done": ("done in {s} s", "done 完成，用时 {s} 秒"),
    "failed": ("done: not checked", "done 完成：未能检查"),
    "cancelled": (
        "cancelled: your code was stopped, nothing was checked",
        "cancelled 已取消：你的代码已停止，未作检查",
    ),
    "score": ("score {score}/100", "得分 {score}/100"),
    "yours": ("yours", "你的结果"),
    "expected": ("expected", "期望"),
    "hint": ("hint", "提示"),
    "not_run": ("not run: your code did not get that far", "未运行：你的代码没有执行到这里"),
    "printed": ("your program printed", "你的程序输出"),
    "predictions": ("Your predictions (they do not change the verdict)", "你的预测（不影响结论）"),
    "unanswered": (
        "not answered: write your prediction in PREDICTIONS, then check to see what the simulator says",
        "未作答：先在 PREDICTIONS 中写下预测，再检查，即可看到模拟器的结果",
    ),
    "simulator": ("the simulator", "模拟器"),
    "costs": ("Cost of your run", "本次运行的开销"),
    "bytes": ("bytes moved", "数据搬运量"),
    "pipes": ("busy time per pipe (summed over cores)", "各流水线忙碌时间（各核之和）"),
    "mine": ("Show my run in the views", "在视图中查看我的运行"),
    "reference": ("Show the lesson's run", "查看课程的运行"),
    "views": ("Views", "视图"),
    "exercise": ("Exercise", "练习"),
    "no_run": (
        "Your code did not get as far as a run: the views keep the lesson's run.",
        "你的代码没有执行到产生运行记录：视图仍显示课程的运行。",
    ),
    "your_run": (
        "The views show your run: {events} events, {us} µs simulated (the reference solution's: {ref_events}).",
        "视图显示的是你的运行：{events} 个事件，模拟 {us} µs（参考答案的运行：{ref_events} 个事件）。",
    ),
    "diff": ("Compare with the reference", "与参考运行对比"),
    "diff.overlap": (
        "Your run lost overlap: {metric} is {mine:.0%} (the reference: {ref:.0%}). Go to the longest wait.",
        "你的运行失去了重叠：{metric} 为 {mine:.0%}（参考：{ref:.0%}）。跳到最长的等待。",
    ),
    "diff.less_work": (
        "Your run does less than the reference: {mine:,} B moved and {mine_flops:,} flops computed, against "
        "{ref:,} B and {ref_flops:,} flops. Go to your kernel.",
        "你的运行做的工作比参考少：搬运 {mine:,} B、计算 {mine_flops:,} flops，参考为 {ref:,} B、{ref_flops:,} flops。"
        "跳到你的核函数。",
    ),
    "diff.bytes": (
        "Your run moved extra bytes: {mine:,} B against the reference's {ref:,} B. Go to the first extra copy.",
        "你的运行多搬运了数据：{mine:,} B，参考为 {ref:,} B。跳到第一次多出的搬运。",
    ),
    "diff.flag_wait": (
        "Your pipes waited longer on flags: {mine:,.3f} µs in all against {ref:,.3f} µs. Go to the longest wait.",
        "你的流水线等待标志的时间更长：共 {mine:,.3f} µs，参考为 {ref:,.3f} µs。跳到最长的等待。",
    ),
    "diff.idle_cores": (
        "Your run left cores idle: {mine} cores ran blocks, the reference used {ref}. Go to the first block.",
        "你的运行让部分核空闲：{mine} 个核运行了块，参考用了 {ref} 个。跳到第一个块。",
    ),
    "diff.faster": (
        "Your run ends earlier than the reference ({mine:,.3f} µs against {ref:,.3f} µs).",
        "你的运行比参考更早结束（{mine:,.3f} µs，参考为 {ref:,.3f} µs）。",
    ),
    "diff.same": (
        "Your run does what the reference does: no lost overlap, extra bytes, flag waits or idle cores.",
        "你的运行与参考一致：没有失去重叠、多余搬运、标志等待或空闲核。",
    ),
    "lane": ("lane", "通道"),
    "objective": ("Objective", "目标"),
    "level": ("level", "级别"),
    "hidden_kinds": (
        "The check also runs hidden cases, drawn afresh each time (their values are never shown):",
        "检查还会运行隐藏用例，每次重新抽取（其具体数值从不显示）：",
    ),
    "hidden": (
        "Hidden cases (drawn afresh at every check; their values are never shown)",
        "隐藏用例（每次检查时重新抽取；具体数值从不显示）",
    ),
    "figures": ("Yours vs the reference solution (the check's main case)", "你的结果与参考答案对比（检查的主用例）"),
    "figure": ("figure", "指标"),
    "lower": ("lower is better", "越低越好"),
    "higher": ("higher is better", "越高越好"),
    "aligned": (
        "Both timelines, lane by lane: each lane of your run above the same lane of the reference's",
        "两条时间线逐通道对齐：你的运行的每个通道在参考运行的同一通道之上",
    ),
    "metric": ("metric", "指标"),
    "mine_col": ("yours", "你的"),
    "ref_col": ("reference", "参考"),
    "busy": ("busy µs", "忙碌 µs"),
    "events": ("events", "事件"),
    "off": (
        "Code runs are off on this server: {why}.",
        "此服务器未开启代码运行：{why}。",
    ),
    "unsandboxed": (
        "Warning: this server runs exercise code WITHOUT a sandbox (--allow-unsandboxed-code). Use it only on "
        "your own machine.",
        "警告：此服务器在没有沙箱的情况下运行练习代码（--allow-unsandboxed-code）。只能在你自己的电脑上使用。",
    ),
}


def text(key: str, lang: str, **values) -> str:
    """The panel's text ``key`` in ``lang``, formatted with ``values``."""
    entry = TEXT[key][0 if lang == "en" else 1]
    return entry.format(**values) if values else entry


__all__ = ("TEXT", "text")
