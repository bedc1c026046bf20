import torch, torch.nn.functional as F
dev = torch.device("cuda")
def t(f, reps=20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    f(); f(); torch.cuda.synchronize()
    ms = []
    for _ in range(reps):
        a.record(); f(); b.record(); b.synchronize(); ms.append(a.elapsed_time(b))
    ms.sort(); return ms[len(ms) // 2]
n = 1 << 28
x = torch.rand(n, device=dev)
m = t(lambda: torch.native_dropout(x, 0.1, True)); print(f"TORCH dropout_f32 {m:.4f} ms {9*n/m/1e6:.0f} GB/s")
m = t(lambda: torch.rand(n, device=dev)); print(f"TORCH rand_f32 {m:.4f} ms {4*n/m/1e6:.0f} GB/s")
m = t(lambda: torch.randn(n, device=dev)); print(f"TORCH randn_f32 {m:.4f} ms {4*n/m/1e6:.0f} GB/s")
m = t(lambda: torch.randn(n, device=dev, dtype=torch.bfloat16)); print(f"TORCH randn_bf16 {m:.4f} ms {2*n/m/1e6:.0f} GB/s")
del x
total = 1 << 26
sizes = [total // 100 + (total // 16384 if i % 2 == 0 else -(total // 16384)) for i in range(99)]
sizes.append(total - sum(sizes))
ps = [torch.nn.Parameter(torch.rand(s, device=dev)) for s in sizes]
for p in ps: p.grad = torch.rand(p.shape, device=dev)
opt = torch.optim.AdamW(ps, lr=1e-3, weight_decay=1e-2, fused=True); opt.step()
m = t(opt.step); print(f"TORCH adamw_f32 {m:.4f} ms {28*total/m/1e6:.0f} GB/s")
del ps, opt
R, C = 16384, 50304
lg = (torch.rand(R, C, device=dev) * 4 - 2).bfloat16().requires_grad_()
tg = torch.randint(0, C, (R,), device=dev)
def ce():
    return torch.autograd.grad(F.cross_entropy(lg, tg), lg)
m = t(ce); print(f"TORCH cross_entropy_bf16 fwd+bwd {m:.4f} ms {6*R*C/m/1e6:.0f} GB/s")
