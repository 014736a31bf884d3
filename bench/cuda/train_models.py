"""The training-step models of train_cuda.py, written once per framework with
the same weights, layouts converted: Plexus in NHWC with TensorFlow's HWIO
filters, PyTorch in NCHW with [out, in, kh, kw] filters.

  digits_cnn   x[B,28,28,1] -> conv 3x3 32 (VALID, bias) -> relu -> maxpool 2x2/2
               -> conv 3x3 64 (VALID, bias) -> relu -> mean over H, W -> dense 10
  resnet       x[B,32,32,3] -> conv 3x3 32 (SAME) -> batch norm -> relu, then two
               residual blocks (conv 3x3 32 -> batch norm -> relu -> conv 3x3 32
               -> batch norm, added to the block's input, relu) -> mean over H, W
               -> dense 10; batch norm in training mode (the batch's statistics,
               computed in float32), epsilon 1e-3
  transformer  x[B,64,128] -> one pre-norm encoder block (layer norm, 4-head
               self-attention with q, k, v and output projections, residual;
               layer norm, dense 512 with tanh-approximated gelu, dense 128,
               residual) -> mean over the sequence -> dense 10; layer norm
               epsilon 1e-5

The loss is the mean sparse softmax cross entropy over 10 classes, in float32.
Under mixed precision the weights stay float32 and are read cast to float16;
convolutions, products and elementwise ops run in float16, and batch norm's
scale and offset, layer norm, softmax and the loss in float32 (what Keras's
mixed_float16 policy and torch.autocast do).

make_weights and make_batch need NumPy (the Plexus side writes them as .npy
files); the torch functions need only torch.
"""

CASES = ("digits_cnn", "resnet", "transformer")
SEQ, DIM, HEADS, FFN, CLASSES = 64, 128, 4, 512, 10
BN_EPSILON, LN_EPSILON = 1e-3, 1e-5


def make_weights(np, case, seed=1234):
    """The case's weights (float32), He-scaled normal kernels, small biases."""
    rng = np.random.default_rng(seed)

    def he(shape, fan_in):
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    def small(n):
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    def ones(n):
        return np.ones(n, np.float32)

    if case == "digits_cnn":
        return {"k1": he((3, 3, 1, 32), 9), "c1": small(32), "k2": he((3, 3, 32, 64), 9 * 32), "c2": small(64),
                "w": he((64, CLASSES), 64), "b": small(CLASSES)}
    if case == "resnet":
        w = {"k0": he((3, 3, 3, 32), 27), "g0": ones(32), "b0": small(32)}
        for i in (1, 2):
            for part in ("a", "b"):
                w[f"k{i}{part}"] = he((3, 3, 32, 32), 9 * 32)
                w[f"g{i}{part}"] = ones(32)
                w[f"b{i}{part}"] = small(32)
        w["w"], w["b"] = he((32, CLASSES), 32), small(CLASSES)
        return w
    if case == "transformer":
        w = {"ln1_g": ones(DIM), "ln1_b": small(DIM), "ln2_g": ones(DIM), "ln2_b": small(DIM)}
        for name in ("q", "k", "v", "o"):
            w[f"w{name}"], w[f"b{name}"] = he((DIM, DIM), DIM), small(DIM)
        w["w1"], w["b1"] = he((DIM, FFN), DIM), small(FFN)
        w["w2"], w["b2"] = he((FFN, DIM), FFN), small(DIM)
        w["wc"], w["bc"] = he((DIM, CLASSES), DIM), small(CLASSES)
        return w
    raise ValueError(f"unknown case {case!r}")


def make_batch(np, case, batch, seed=100):
    """Inputs (NHWC for the CNNs) and labels, as float32 (labels are small integers)."""
    rng = np.random.default_rng(seed + batch)
    shape = {"digits_cnn": (batch, 28, 28, 1), "resnet": (batch, 32, 32, 3),
             "transformer": (batch, SEQ, DIM)}[case]
    return (rng.standard_normal(shape).astype(np.float32),
            rng.integers(0, CLASSES, batch).astype(np.float32))


# ---- Plexus ------------------------------------------------------------------

def plexus_logits(px, case, read, x, mixed):
    """Logits (float32) of `case`; read(name) gives a weight in the compute
    dtype, read(name, float32=True) in float32."""
    cdt = "float16" if mixed else "float32"
    x = px.cast(x, cdt) if mixed else x
    f32 = (lambda t: px.cast(t, "float32")) if mixed else (lambda t: t)
    back = (lambda t: px.cast(t, cdt)) if mixed else (lambda t: t)

    def dense(h, w, b):
        return px.nn.bias_add(px.matmul(h, read(w)), read(b))

    if case == "digits_cnn":
        h = px.nn.relu(px.nn.bias_add(px.nn.conv2d(x, read("k1"), 1, "VALID"), read("c1")))
        h = px.nn.max_pool2d(h, 2, 2, "VALID")
        h = px.nn.relu(px.nn.bias_add(px.nn.conv2d(h, read("k2"), 1, "VALID"), read("c2")))
        return f32(dense(px.reduce_mean(h, axis=[1, 2]), "w", "b"))

    if case == "resnet":
        def bn(h, g, b):
            # Written out, in float32, as plexus.keras's BatchNormalization
            # trains (the fused op's kernels do inference only).
            h = f32(h)
            mean = px.reduce_mean(h, axis=[0, 1, 2], keepdims=True)
            var = px.reduce_mean(px.square(h - mean), axis=[0, 1, 2], keepdims=True)
            inv = px.rsqrt(var + BN_EPSILON) * read(g, float32=True)
            return back(h * inv + (read(b, float32=True) - mean * inv))

        h = px.nn.relu(bn(px.nn.conv2d(x, read("k0"), 1, "SAME"), "g0", "b0"))
        for i in (1, 2):
            y = px.nn.relu(bn(px.nn.conv2d(h, read(f"k{i}a"), 1, "SAME"), f"g{i}a", f"b{i}a"))
            y = bn(px.nn.conv2d(y, read(f"k{i}b"), 1, "SAME"), f"g{i}b", f"b{i}b")
            h = px.nn.relu(h + y)
        return f32(dense(px.reduce_mean(h, axis=[1, 2]), "w", "b"))

    if case == "transformer":
        dh = DIM // HEADS

        def layer_norm(h, g, b):
            h = f32(h)
            mu = px.reduce_mean(h, axis=[-1], keepdims=True)
            var = px.reduce_mean(px.square(h - mu), axis=[-1], keepdims=True)
            y = (h - mu) * px.rsqrt(var + LN_EPSILON) * read(g, float32=True) + read(b, float32=True)
            return back(y)

        def project(h2d, w, b, batch):
            return px.reshape(dense(h2d, w, b), [batch, SEQ, HEADS, dh])

        batch = x.shape[0]
        h = px.reshape(layer_norm(x, "ln1_g", "ln1_b"), [-1, DIM])
        q, k, v = (px.transpose(project(h, f"w{n}", f"b{n}", batch), [0, 2, 1, 3]) for n in "qkv")
        scores = px.matmul(q, k, transpose_b=True) * px.cast(px.constant(dh ** -0.5), cdt)
        attention = back(px.nn.softmax(f32(scores), axis=-1))
        context = px.reshape(px.transpose(px.matmul(attention, v), [0, 2, 1, 3]), [-1, DIM])
        x1 = x + px.reshape(dense(context, "wo", "bo"), [batch, SEQ, DIM])
        h2 = px.reshape(layer_norm(x1, "ln2_g", "ln2_b"), [-1, DIM])
        f = dense(px.nn.gelu(dense(h2, "w1", "b1"), approximate=True), "w2", "b2")
        x2 = x1 + px.reshape(f, [batch, SEQ, DIM])
        return f32(dense(px.reduce_mean(x2, axis=[1]), "wc", "bc"))
    raise ValueError(f"unknown case {case!r}")


# ---- PyTorch -------------------------------------------------------------------

def torch_layout(t):
    """A Plexus weight in PyTorch's layout: HWIO filters to [out, in, kh, kw]."""
    return t.permute(3, 2, 0, 1).contiguous() if t.dim() == 4 else t


def torch_input(case, x):
    """NHWC inputs to NCHW."""
    return x.permute(0, 3, 1, 2).contiguous() if case in ("digits_cnn", "resnet") else x


def torch_logits(torch, case, p, x):
    """Logits of `case` (under torch.autocast for mixed precision)."""
    F = torch.nn.functional
    if case == "digits_cnn":
        h = F.max_pool2d(torch.relu(F.conv2d(x, p["k1"], p["c1"])), 2, 2)
        h = torch.relu(F.conv2d(h, p["k2"], p["c2"])).mean(dim=(2, 3))
        return F.linear(h, p["w"].t(), p["b"])
    if case == "resnet":
        def bn(h, g, b):
            return F.batch_norm(h, None, None, p[g], p[b], training=True, momentum=0.0, eps=BN_EPSILON)

        h = torch.relu(bn(F.conv2d(x, p["k0"], padding=1), "g0", "b0"))
        for i in (1, 2):
            y = torch.relu(bn(F.conv2d(h, p[f"k{i}a"], padding=1), f"g{i}a", f"b{i}a"))
            y = bn(F.conv2d(y, p[f"k{i}b"], padding=1), f"g{i}b", f"b{i}b")
            h = torch.relu(h + y)
        return F.linear(h.mean(dim=(2, 3)), p["w"].t(), p["b"])
    if case == "transformer":
        batch, dh = x.shape[0], DIM // HEADS
        h = F.layer_norm(x, (DIM,), p["ln1_g"], p["ln1_b"], eps=LN_EPSILON)

        def heads(n):
            return F.linear(h, p[f"w{n}"].t(), p[f"b{n}"]).view(batch, SEQ, HEADS, dh).transpose(1, 2)

        q, k, v = heads("q"), heads("k"), heads("v")
        attention = torch.softmax(q @ k.transpose(-1, -2) * dh ** -0.5, dim=-1)
        context = (attention @ v).transpose(1, 2).reshape(batch, SEQ, DIM)
        x1 = x + F.linear(context, p["wo"].t(), p["bo"])
        h2 = F.layer_norm(x1, (DIM,), p["ln2_g"], p["ln2_b"], eps=LN_EPSILON)
        f = F.linear(F.gelu(F.linear(h2, p["w1"].t(), p["b1"]), approximate="tanh"), p["w2"].t(), p["b2"])
        x2 = x1 + f
        return F.linear(x2.mean(dim=1), p["wc"].t(), p["bc"])
    raise ValueError(f"unknown case {case!r}")
