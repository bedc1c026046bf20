#!/usr/bin/env python3
"""The GPT of examples/gpt/ in PyTorch, for parity checks of `ferrite train`.

It loads a ferrite checkpoint (weights, AdamW moments, step, the batch sampler's state and the
hyperparameters, all in one safetensors file), draws the same batches from the same corpus with
the same splitmix64 generator, and trains with torch.optim.AdamW, printing each step's loss.

    ferrite train --preset tiny --device cpu --steps 0 --schedule-steps 20 --checkpoint init.safetensors
    ferrite train --preset tiny --device cpu --resume init.safetensors --steps 20 --log-every 1 \\
        --json ferrite.json --dump-grads ferrite_grads.safetensors
    python3 examples/gpt/torch_reference.py --checkpoint init.safetensors --steps 20 \\
        --ferrite-json ferrite.json --compare-grads ferrite_grads.safetensors

--data defaults to /usr/share/common-licenses, as `ferrite train` does; pass the same --data to
both. Runs on CUDA when available (--device cpu to force the CPU), in F32 with TF32 off.
"""
import argparse
import json
import math
import os
import struct
import sys

MASK64 = (1 << 64) - 1
DEFAULT_CORPUS = "/usr/share/common-licenses"


class SplitMix64:
    """examples/gpt/data.hpp's generator."""

    def __init__(self, state):
        self.state = state & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def load_corpus(path, context):
    """A file, or a directory's regular files (no symbolic links) concatenated in name order;
    the last 10% is validation (examples/gpt/data.cpp)."""
    if os.path.isdir(path):
        names = sorted(os.listdir(path))
        data = b"".join(
            open(os.path.join(path, n), "rb").read()
            for n in names
            if not os.path.islink(os.path.join(path, n)) and os.path.isfile(os.path.join(path, n))
        )
    else:
        data = open(path, "rb").read()
    n_val = len(data) // 10
    if n_val < context + 1:
        sys.exit(f"{path}: too short for a context of {context}")
    return data[: len(data) - n_val], data[len(data) - n_val :]


def sample_batch(data, batch, context, rng):
    starts = len(data) - context
    xs, ys = [], []
    for _ in range(batch):
        off = rng.next() % starts
        xs.append(list(data[off : off + context]))
        ys.append(list(data[off + 1 : off + context + 1]))
    return xs, ys


SAFETENSORS_DTYPES = {"F32": "float32", "F64": "float64", "F16": "float16", "BF16": "bfloat16", "I64": "int64", "I32": "int32"}


def read_safetensors(path):
    """(metadata, {name: (dtype name, shape, bytes)}) without the safetensors package."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        start = 8 + length
        f.seek(0)
        blob = f.read()
    metadata = header.pop("__metadata__", {})
    tensors = {}
    for name, entry in header.items():
        a, b = entry["data_offsets"]
        tensors[name] = (entry["dtype"], entry["shape"], blob[start + a : start + b])
    return metadata, tensors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checkpoint", required=True, help="a checkpoint written by ferrite train")
    ap.add_argument("--data", default=DEFAULT_CORPUS)
    ap.add_argument("--steps", type=int, default=20, help="steps to train from the checkpoint's step")
    ap.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    ap.add_argument("--sdpa", action="store_true", help="use F.scaled_dot_product_attention (default: the explicit composition ferrite uses)")
    ap.add_argument("--bf16", action="store_true", help="autocast to BF16 (compare with ferrite train --precision bf16: curves within 2%%)")
    ap.add_argument("--bench", type=int, default=0, metavar="N",
                    help="instead: time N training steps on random tokens, eager and torch.compile (tokens/s, peak memory)")
    ap.add_argument("--batch", type=int, default=0, help="with --bench: sequences per step (default: the checkpoint's)")
    ap.add_argument("--modes", default="eager,compile", help="with --bench: which of eager,compile to time")
    ap.add_argument("--profile", action="store_true",
                    help="with --bench: after the eager timing, two eager steps under torch.profiler; prints the "
                         "GPU time per kernel (to set beside ferrite train --profile's phases)")
    ap.add_argument("--dump-grads", help="write the first step's gradients (before clipping) here")
    ap.add_argument("--compare-grads", help="ferrite's --dump-grads file: print each parameter's relative gradient error")
    ap.add_argument("--ferrite-json", help="ferrite train's --json log: print the relative loss error per step")
    args = ap.parse_args()

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))

    metadata, raw = read_safetensors(args.checkpoint)
    m = {k: int(metadata["model." + k]) for k in ("vocab", "context", "n_layer", "n_head", "n_embd")}
    tc = {k[len("train."):]: float(v) for k, v in metadata.items() if k.startswith("train.")}
    start_step, data_rng = int(metadata["step"]), int(metadata["data_rng"])

    def tensor(name):
        dtype, shape, data = raw[name]
        t = torch.frombuffer(bytearray(data), dtype=getattr(torch, SAFETENSORS_DTYPES[dtype])).reshape(shape)
        return t.clone().to(device)

    class Attention(nn.Module):
        def __init__(self, c, n_head):
            super().__init__()
            self.n_head = n_head
            self.c_attn = nn.Linear(c, 3 * c)
            self.c_proj = nn.Linear(c, c)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(c, dim=2)
            q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
            if args.sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
                y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class MLP(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c_fc = nn.Linear(c, 4 * c)
            self.c_proj = nn.Linear(4 * c, c)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self, c, n_head):
            super().__init__()
            self.ln_1 = nn.LayerNorm(c, eps=1e-5)
            self.attn = Attention(c, n_head)
            self.ln_2 = nn.LayerNorm(c, eps=1e-5)
            self.mlp = MLP(c)

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(m["vocab"], m["n_embd"])
            self.wpe = nn.Embedding(m["context"], m["n_embd"])
            self.h = nn.ModuleList(Block(m["n_embd"], m["n_head"]) for _ in range(m["n_layer"]))
            self.ln_f = nn.LayerNorm(m["n_embd"], eps=1e-5)

        def forward(self, idx):
            t = idx.size(1)
            x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
            for block in self.h:
                x = block(x)
            return self.ln_f(x) @ self.wte.weight.t()  # tied head

    model = GPT().to(device)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(tensor(name))
    decay = [p for n, p in params.items() if p.dim() >= 2]
    no_decay = [p for n, p in params.items() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": tc["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=tc["lr"], betas=(tc["beta1"], tc["beta2"]), eps=tc["eps"], foreach=False, fused=False,
    )
    if start_step > 0 and "optim.m.wte.weight" in raw:
        for name, p in params.items():
            opt.state[p] = {
                "step": torch.tensor(float(start_step)),
                "exp_avg": tensor("optim.m." + name),
                "exp_avg_sq": tensor("optim.v." + name),
            }

    def learning_rate(step):  # examples/gpt/schedule.hpp
        lr, warmup, total = tc["lr"], int(tc["warmup"]), int(tc["schedule_steps"])
        min_lr = lr * tc["min_lr_ratio"]
        if step < warmup:
            return lr * (step + 1) / warmup
        if step >= total:
            return min_lr
        progress = (step - warmup) / max(1, total - warmup)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (lr - min_lr)

    if args.bench:
        import time

        batch = args.batch or int(tc["batch"])
        # PyTorch at its fastest for the speed comparison: the fused AdamW kernel and the
        # multi-tensor gradient clipping (the parity runs above use the per-parameter loops,
        # whose order of operations is easier to mirror but which launch a few kernels per
        # parameter tensor).
        fast = device.type == "cuda"
        opt = torch.optim.AdamW(
            [{"params": decay, "weight_decay": tc["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
            lr=tc["lr"], betas=(tc["beta1"], tc["beta2"]), eps=tc["eps"], fused=fast,
        )
        x = torch.randint(0, m["vocab"], (batch, m["context"]), device=device)
        y = torch.randint(0, m["vocab"], (batch, m["context"]), device=device)
        for mode in args.modes.split(","):
            run = model if mode == "eager" else torch.compile(model)

            def step():
                opt.zero_grad(set_to_none=True)
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
                    logits = run(x)
                loss = F.cross_entropy(logits.float().view(-1, m["vocab"]), y.view(-1))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=fast)
                opt.step()

            for _ in range(3):  # warm-up (and compilation)
                step()
            if device.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            for _ in range(args.bench):
                step()
            if device.type == "cuda":
                torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
            peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else float("nan")
            print(f"torch {mode:8s} {'bf16' if args.bf16 else 'f32'} {'sdpa' if args.sdpa else 'explicit'}: "
                  f"{args.bench * batch * m['context'] / seconds:10.0f} tok/s, peak memory {peak:.0f} MiB")
            if args.profile and mode == "eager" and device.type == "cuda":
                from torch.profiler import ProfilerActivity, profile
                with profile(activities=[ProfilerActivity.CUDA]) as prof:
                    for _ in range(2):
                        step()
                    torch.cuda.synchronize()
                print("torch eager profile (2 steps; GPU time per kernel):")
                print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=40, max_name_column_width=70))
        return

    train, _ = load_corpus(args.data, m["context"])
    rng = SplitMix64(data_rng)
    batch, accum = int(tc["batch"]), int(tc["accum"])
    ferrite_losses = {}
    if args.ferrite_json:
        for line in open(args.ferrite_json):
            rec = json.loads(line)
            if rec.get("event") == "step":
                ferrite_losses[rec["step"]] = rec["loss"]
    print(f"torch {torch.__version__} on {device}; {m}; from step {start_step}")
    worst = 0.0
    for step in range(start_step, start_step + args.steps):
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for _ in range(accum):
            xs, ys = sample_batch(train, batch, m["context"], rng)
            x = torch.tensor(xs, dtype=torch.long, device=device)
            y = torch.tensor(ys, dtype=torch.long, device=device)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
                logits = model(x)
            loss = F.cross_entropy(logits.float().view(-1, m["vocab"]), y.view(-1))
            (loss / accum).backward()
            total += loss.item() / accum
        if step == start_step and (args.dump_grads or args.compare_grads):
            grads = {n: p.grad.detach().float().cpu() for n, p in params.items()}
            if args.dump_grads:
                header, blobs, off = {}, [], 0
                for n, g in grads.items():
                    b = g.numpy().tobytes()
                    header[n] = {"dtype": "F32", "shape": list(g.shape), "data_offsets": [off, off + len(b)]}
                    blobs.append(b)
                    off += len(b)
                text = json.dumps(header).encode()
                text += b" " * ((8 - len(text) % 8) % 8)
                with open(args.dump_grads, "wb") as f:
                    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
            if args.compare_grads:
                _, theirs = read_safetensors(args.compare_grads)
                gworst = 0.0
                for n, g in grads.items():
                    dtype, shape, data = theirs[n]
                    f = torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(shape)
                    rel = ((f - g).norm() / g.norm().clamp_min(1e-30)).item()
                    gworst = max(gworst, rel)
                    print(f"  grad {n:28s} relative error {rel:.2e}")
                # BF16: weight gradients are BF16 products, so elements one rounding apart (a
                # different summation order) give a few 1e-3 in norm.
                glimit = 1e-2 if args.bf16 else 1e-3
                print(f"gradients after step {step + 1}: worst relative error {gworst:.2e} ({'ok' if gworst < glimit else 'FAIL'} at {glimit:g})")
        if tc["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc["grad_clip"], foreach=False)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step)
        opt.step()
        line = f"step {step + 1:5d} loss {total:.7f}"
        if step + 1 in ferrite_losses:
            rel = abs(ferrite_losses[step + 1] - total) / abs(total)
            worst = max(worst, rel)
            line += f"  ferrite {ferrite_losses[step + 1]:.7f}  relative {rel:.2e}"
        print(line)
    if ferrite_losses:
        limit = 2e-2 if args.bf16 else 1e-4
        print(f"losses: worst relative difference {worst:.2e} ({'ok' if worst < limit else 'FAIL'} at {limit:g})")


if __name__ == "__main__":
    main()
