#!/usr/bin/env python3
"""Make report 000's history on branch report-000 of the linux-source-6.1
repository by git plumbing (a private index), so the working tree and
the checked-out branch are never written: eight small commits on the
unpacked source, the fourth adding the mechanism of a3af84b0fa."""
import os, subprocess, sys, tempfile
repo = sys.argv[1]
env = dict(os.environ, GIT_INDEX_FILE=tempfile.mktemp(), GIT_AUTHOR_DATE="2026-12-04T12:00:00Z", GIT_COMMITTER_DATE="2026-12-04T12:00:00Z")
def git(*a, inp=None):
    return subprocess.run(["git", "-C", repo, *a], env=env, input=inp, capture_output=True, check=True, text=True).stdout.strip()
base = git("rev-parse", "main")
git("read-tree", base)

def comment_after_line1(text, c):
    i = text.index("\n") + 1
    return text[:i] + c + text[i:]

IBPB_FN = '''/*
 * Flush the indirect branch predictors of this CPU: the predictors may
 * hold targets trained on the memory a new JIT image reuses.
 */
static void bpf_jit_ibpb_flush(void *unused)
{
	indirect_branch_prediction_barrier();
}

struct bpf_prog *bpf_int_jit_compile(struct bpf_prog *prog)
{'''
IBPB_CALL = '''			if (!header) {
				prog = orig_prog;
				goto out_addrs;
			}
			/*
			 * IBPB on every CPU before the new image can run: a
			 * broadcast, waited for, on each JIT allocation.
			 */
			on_each_cpu(bpf_jit_ibpb_flush, NULL, 1);
			prog->aux->extable'''

def ibpb(t):
    a = t.replace("struct bpf_prog *bpf_int_jit_compile(struct bpf_prog *prog)\n{", IBPB_FN, 1)
    b = a.replace('''			if (!header) {
				prog = orig_prog;
				goto out_addrs;
			}
			prog->aux->extable''', IBPB_CALL, 1)
    assert a != t and b != a
    return b

commits = [
    ("mm/mmap.c", lambda t: comment_after_line1(t, "/* mmap, munmap, brk: the address space's regions. */\n"),
     "mm: say what mmap.c holds in its first comment"),
    ("kernel/sys.c", lambda t: t + "\nint kbench_broken_by_commit = ;\n",
     "kernel/sys.c: a stray definition that does not compile"),
    ("kernel/sys.c", lambda t: t.replace("\nint kbench_broken_by_commit = ;\n", "\n/* kbench: the stray definition removed again. */\n"),
     "kernel/sys.c: remove the stray definition"),
    ("arch/x86/net/bpf_jit_comp.c", ibpb,
     "x86/bugs: Enable IBPB flush on BPF JIT allocation\n\nFlush the indirect branch predictors of every CPU on each BPF JIT\nallocation (on_each_cpu of an IBPB, after bpf_jit_binary_pack_alloc),\nso that no predictor entry trained on reused JIT memory survives.\nkbench's model of a3af84b0fa for report 000; the IPI broadcast stays\nwhere a CPU has no IBPB (the barrier is then the alternative's no-op)."),
    ("net/core/sock.c", lambda t: comment_after_line1(t, "/* Generic socket support, shared by every protocol family. */\n"),
     "net: say what sock.c holds"),
    ("kernel/fork.c", lambda t: comment_after_line1(t, "/* fork, clone and the task's copy of its parent's state. */\n"),
     "fork: say what fork.c holds"),
    ("fs/pipe.c", lambda t: comment_after_line1(t, "/* Pipes and FIFOs. */\n"),
     "pipe: say what pipe.c holds"),
    ("lib/sort.c", lambda t: comment_after_line1(t, "/* Heapsort, in place. */\n"),
     "lib/sort: say which sort sort.c is"),
]
parent = base
for path, edit, msg in commits:
    text = git("show", f"{parent}:{path}") + "\n"
    blob = git("hash-object", "-w", "--stdin", "--path", path, inp=edit(text))
    git("update-index", "--cacheinfo", f"100644,{blob},{path}")
    tree = git("write-tree")
    parent = git("commit-tree", tree, "-p", parent, "-m", msg)
    print(parent, msg.splitlines()[0])
git("update-ref", "refs/heads/report-000", parent)
os.unlink(env["GIT_INDEX_FILE"])
