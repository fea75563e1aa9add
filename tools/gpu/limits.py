# The qs200 round of tools/gpu/bench.sh in plain PyTorch on the same GPU, so that drift's figures
# are ratios measured side by side (docs/benchmarks.md#gpu): small CNN (conv 16, conv 32, k5,
# FC-128), 40 clients x 5 steps of batch 64, SGD with momentum 0.9, data already on the GPU.
# (a) eager, one client after another, as a Python simulator runs them; (b) the same with the
# deterministic kernels drift asks for on a GPU; (c) one CUDA graph of a training step, replayed
# for every step of every client; (d) torch.func's vmap over the 40 clients, one step training
# all of them; and an evaluation of 10,000 test images.
import sys, time, traceback, torch, torch.nn as nn, torch.nn.functional as F

dev = "cuda" if torch.cuda.is_available() else "cpu"
CLIENTS, STEPS, B, REPS = (40, 5, 64, 5) if dev == "cuda" else (4, 2, 16, 1)
torch.manual_seed(0)


class Net(nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = nn.Conv2d(1, 16, 5); s.c2 = nn.Conv2d(16, 32, 5); s.fc = nn.Linear(32 * 4 * 4, 128); s.h = nn.Linear(128, 10)

    def forward(s, x):
        x = F.max_pool2d(F.relu(s.c1(x)), 2); x = F.max_pool2d(F.relu(s.c2(x)), 2)
        return s.h(F.relu(s.fc(x.flatten(1))))


X = torch.randn(CLIENTS, STEPS, B, 1, 28, 28, device=dev)
Y = torch.randint(10, (CLIENTS, STEPS, B), device=dev)


def sync():
    if dev == "cuda": torch.cuda.synchronize()


def timed(name, round_fn):
    try:
        round_fn(); sync()
        t = []
        for _ in range(REPS):
            s = time.perf_counter(); round_fn(); sync(); t.append(time.perf_counter() - s)
        t.sort()
        print("%-34s s/round median %.4f  min %.4f  (%d clients x %d steps)" % (name, t[len(t) // 2], t[0], CLIENTS, STEPS), flush=True)
    except Exception:
        print(name, "FAILED"); traceback.print_exc(limit=2)


glob = Net().to(dev)
model = Net().to(dev)


def eager_round():
    acc = [torch.zeros_like(p) for p in glob.parameters()]
    for c in range(CLIENTS):
        model.load_state_dict(glob.state_dict())
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for s in range(STEPS):
            opt.zero_grad(); F.cross_entropy(model(X[c, s]), Y[c, s]).backward(); opt.step()
        for a, p in zip(acc, model.parameters()): a.add_(p.detach())
    with torch.no_grad():
        for g, a in zip(glob.parameters(), acc): g.copy_(a / CLIENTS)


timed("(a) eager, clients in turn", eager_round)
if dev == "cuda":
    torch.backends.cudnn.benchmark = False; torch.backends.cudnn.deterministic = True
    torch.use_deterministic_algorithms(True, warn_only=True)
    timed("(b) eager, deterministic kernels", eager_round)
    torch.use_deterministic_algorithms(False); torch.backends.cudnn.deterministic = False

# (c) CUDA graph of one step (forward, backward, momentum SGD), replayed STEPS x CLIENTS times.
def graph_round_factory():
    m = Net().to(dev); params = list(m.parameters()); bufs = [torch.zeros_like(p) for p in params]
    sx = torch.zeros(B, 1, 28, 28, device=dev); sy = torch.zeros(B, dtype=torch.long, device=dev)

    def step():
        loss = F.cross_entropy(m(sx), sy)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, b in zip(params, grads, bufs):
                b.mul_(0.9).add_(g); p.add_(b, alpha=-0.05)

    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g): step()

    def rnd():
        acc = [torch.zeros_like(p) for p in params]
        for c in range(CLIENTS):
            with torch.no_grad():
                for p, q, b in zip(params, glob.parameters(), bufs): p.copy_(q); b.zero_()
            for st in range(STEPS):
                sx.copy_(X[c, st]); sy.copy_(Y[c, st]); g.replay()
            for a, p in zip(acc, params): a.add_(p.detach())
        with torch.no_grad():
            for q, a in zip(glob.parameters(), acc): q.copy_(a / CLIENTS)
    return rnd


if dev == "cuda":
    try:
        timed("(c) CUDA graph per step, replayed", graph_round_factory())
    except Exception:
        print("(c) FAILED"); traceback.print_exc(limit=2)

# (d) vmap over clients.
try:
    from torch.func import functional_call, grad, vmap, stack_module_state
    base = Net().to(dev)

    def loss_fn(p, x, y):
        return F.cross_entropy(functional_call(base, p, (x,)), y)

    g_all = vmap(grad(loss_fn), in_dims=(0, 0, 0))

    def vmap_round():
        params = {k: v.detach().unsqueeze(0).repeat(CLIENTS, *[1] * v.dim()).clone() for k, v in glob.named_parameters()}
        bufs = {k: torch.zeros_like(v) for k, v in params.items()}
        for st in range(STEPS):
            gr = g_all(params, X[:, st], Y[:, st])
            for k in params:
                bufs[k].mul_(0.9).add_(gr[k]); params[k].sub_(0.05 * bufs[k])
        with torch.no_grad():
            for k, v in glob.named_parameters(): v.copy_(params[k].mean(0))

    timed("(d) vmap over all clients", vmap_round)
except Exception:
    print("(d) FAILED"); traceback.print_exc(limit=2)

# Evaluation of 10,000 test images, batch 1000 (drift evaluates every round).
XT = torch.randn(10000, 1, 28, 28, device=dev)
def ev():
    with torch.no_grad():
        for i in range(0, 10000, 1000): glob(XT[i:i + 1000]).argmax(1)
timed("eval 10k", ev)
print("torch", torch.__version__, "device", torch.cuda.get_device_name() if dev == "cuda" else "cpu")
