"""The FX parity corpus: small modules, each a few lines of forward, that torch.fx 1.13 traces.

Each case is (name, forward) or (name, forward, init), written as the source text of the module's
methods so that TorchScript keeps the text in its debug info. `make_cases.py` writes them into one
generated Python file, imports it, scripts every module and records torch.fx's graph and code.

Naming: the prefix says what the case covers (fn_ torch.nn.functional, meth_ Tensor methods,
op_ Python operators, idx_ indexing, shape_ shape arithmetic, mod_ modules, const_ constants,
ret_ returns, sig_ signatures, train_ self.training, torch_ torch functions, lit_ literals as written,
src_ what the source says and the compiled graph no longer holds: issue 54's classes).
"""

# --- torch.nn.functional: every function TorchScript compiles, with typical arguments ---------------
# (name, call) with forward(self, x, y, w, idx) available: x, y float tensors, w a weight, idx indices.
FUNCTIONAL = [
    # Through another alias of torch.nn.functional (`import torch.nn.functional as fn`): no method.
    ("alias_linear", "fn.linear(x, w)"), ("alias_linear_bias", "fn.linear(x, w, y)"),
    ("relu", "F.relu(x)"), ("relu_inplace", "F.relu(x, inplace=True)"), ("relu6", "F.relu6(x)"),
    ("elu", "F.elu(x)"), ("elu_alpha", "F.elu(x, alpha=0.5)"), ("selu", "F.selu(x)"), ("celu", "F.celu(x, 2.0)"),
    ("leaky_relu", "F.leaky_relu(x, 0.2)"), ("leaky_relu_kw", "F.leaky_relu(x, negative_slope=0.1)"),
    ("prelu", "F.prelu(x, w)"), ("rrelu", "F.rrelu(x)"), ("glu", "F.glu(x)"), ("glu_dim", "F.glu(x, dim=-1)"),
    ("gelu", "F.gelu(x)"), ("gelu_tanh", "F.gelu(x, approximate='tanh')"), ("logsigmoid", "F.logsigmoid(x)"),
    ("hardshrink", "F.hardshrink(x)"), ("tanhshrink", "F.tanhshrink(x)"), ("softsign", "F.softsign(x)"),
    ("softplus", "F.softplus(x)"), ("softplus_beta", "F.softplus(x, beta=2.0, threshold=10.0)"),
    ("softmin", "F.softmin(x, dim=1)"), ("softmax", "F.softmax(x, dim=-1)"), ("softmax_pos", "F.softmax(x, 1)"),
    ("log_softmax", "F.log_softmax(x, dim=1)"), ("softshrink", "F.softshrink(x, 0.5)"),
    ("tanh", "F.tanh(x)"), ("sigmoid", "F.sigmoid(x)"), ("hardsigmoid", "F.hardsigmoid(x)"), ("silu", "F.silu(x)"),
    ("mish", "F.mish(x)"), ("hardswish", "F.hardswish(x)"), ("hardtanh", "F.hardtanh(x)"),
    ("hardtanh_range", "F.hardtanh(x, -2.0, 2.0)"), ("threshold", "F.threshold(x, 0.1, 20.0)"),
    ("batch_norm", "F.batch_norm(x, y, w, training=False)"), ("instance_norm", "F.instance_norm(x)"),
    ("layer_norm", "F.layer_norm(x, [4])"), ("layer_norm_affine", "F.layer_norm(x, (4,), w, y)"),
    ("group_norm", "F.group_norm(x, 2)"), ("local_response_norm", "F.local_response_norm(x, 2)"),
    ("normalize", "F.normalize(x)"), ("normalize_dim", "F.normalize(x, p=1.0, dim=-1)"),
    ("linear", "F.linear(x, w)"), ("linear_bias", "F.linear(x, w, y)"), ("bilinear", "F.bilinear(x, y, w)"),
    ("dropout", "F.dropout(x)"), ("dropout_p", "F.dropout(x, p=0.2, training=False)"),
    ("alpha_dropout", "F.alpha_dropout(x, 0.1)"), ("feature_alpha_dropout", "F.feature_alpha_dropout(x)"),
    ("dropout1d", "F.dropout1d(x)"), ("dropout2d", "F.dropout2d(x, 0.3)"), ("dropout3d", "F.dropout3d(x)"),
    ("embedding", "F.embedding(idx, w)"), ("embedding_pad", "F.embedding(idx, w, padding_idx=0)"),
    ("one_hot", "F.one_hot(idx, 10)"), ("pad", "F.pad(x, [1, 1])"), ("pad_mode", "F.pad(x, (1, 2), mode='constant', value=0.5)"),
    ("interpolate", "F.interpolate(x, scale_factor=2.0)"), ("interpolate_size", "F.interpolate(x, size=[8, 8], mode='bilinear')"),
    ("grid_sample", "F.grid_sample(x, y, align_corners=False)"), ("affine_grid", "F.affine_grid(x, [1, 1, 4, 4], align_corners=False)"),
    ("pixel_shuffle", "F.pixel_shuffle(x, 2)"), ("pixel_unshuffle", "F.pixel_unshuffle(x, 2)"),
    ("conv1d", "F.conv1d(x, w)"), ("conv2d", "F.conv2d(x, w)"), ("conv2d_kw", "F.conv2d(x, w, y, stride=2, padding=1)"),
    ("conv3d", "F.conv3d(x, w)"), ("conv_transpose1d", "F.conv_transpose1d(x, w)"),
    ("conv_transpose2d", "F.conv_transpose2d(x, w, stride=2)"), ("unfold", "F.unfold(x, 2)"),
    ("fold", "F.fold(x, [4, 4], 2)"), ("avg_pool1d", "F.avg_pool1d(x, 2)"), ("avg_pool2d", "F.avg_pool2d(x, 2)"),
    ("avg_pool2d_kw", "F.avg_pool2d(x, kernel_size=3, stride=1, padding=1)"), ("avg_pool3d", "F.avg_pool3d(x, 2)"),
    ("max_pool1d", "F.max_pool1d(x, 2)"), ("max_pool2d", "F.max_pool2d(x, 2)"),
    ("max_pool2d_kw", "F.max_pool2d(x, kernel_size=3, stride=2, padding=1)"), ("max_pool3d", "F.max_pool3d(x, 2)"),
    ("adaptive_avg_pool1d", "F.adaptive_avg_pool1d(x, 1)"), ("adaptive_avg_pool2d", "F.adaptive_avg_pool2d(x, (1, 1))"),
    ("adaptive_avg_pool3d", "F.adaptive_avg_pool3d(x, 1)"), ("adaptive_max_pool1d", "F.adaptive_max_pool1d(x, 1)"),
    ("adaptive_max_pool2d", "F.adaptive_max_pool2d(x, 1)"), ("lp_pool1d", "F.lp_pool1d(x, 2.0, 2)"),
    ("lp_pool2d", "F.lp_pool2d(x, 2.0, 2)"), ("cosine_similarity", "F.cosine_similarity(x, y)"),
    ("pairwise_distance", "F.pairwise_distance(x, y)"), ("pdist", "F.pdist(x)"),
    ("triplet_margin_loss", "F.triplet_margin_loss(x, y, w)"), ("l1_loss", "F.l1_loss(x, y)"),
    ("mse_loss", "F.mse_loss(x, y)"), ("mse_loss_sum", "F.mse_loss(x, y, reduction='sum')"),
    ("cross_entropy", "F.cross_entropy(x, idx)"), ("cross_entropy_ls", "F.cross_entropy(x, idx, label_smoothing=0.1)"),
    ("nll_loss", "F.nll_loss(x, idx)"), ("binary_cross_entropy", "F.binary_cross_entropy(x, y)"),
    ("bce_with_logits", "F.binary_cross_entropy_with_logits(x, y)"), ("kl_div", "F.kl_div(x, y, reduction='batchmean')"),
    ("smooth_l1_loss", "F.smooth_l1_loss(x, y)"), ("huber_loss", "F.huber_loss(x, y, delta=0.5)"),
    ("soft_margin_loss", "F.soft_margin_loss(x, y)"), ("multilabel_soft_margin_loss", "F.multilabel_soft_margin_loss(x, y)"),
    ("hinge_embedding_loss", "F.hinge_embedding_loss(x, y)"), ("cosine_embedding_loss", "F.cosine_embedding_loss(x, y, w)"),
    ("margin_ranking_loss", "F.margin_ranking_loss(x, y, w)"), ("poisson_nll_loss", "F.poisson_nll_loss(x, y)"),
    ("gaussian_nll_loss", "F.gaussian_nll_loss(x, y, w)"), ("multi_margin_loss", "F.multi_margin_loss(x, idx)"),
    ("multilabel_margin_loss", "F.multilabel_margin_loss(x, idx)"), ("channel_shuffle", "F.channel_shuffle(x, 2)"),
    ("elu_", "F.elu_(x)"), ("leaky_relu_", "F.leaky_relu_(x)"), ("hardtanh_", "F.hardtanh_(x)"),
    ("threshold_", "F.threshold_(x, 0.0, 1.0)"), ("rrelu_", "F.rrelu_(x)"), ("celu_", "F.celu_(x)"), ("selu_", "F.selu_(x)"),
    ("logsigmoid_then_add", "F.logsigmoid(x) + F.softplus(y)"),
]

# --- Tensor methods: (name, call on x) --------------------------------------------------------------
METHODS = [
    # A method of a bracketed expression: TorchScript's range drops the opening bracket (issue 21).
    ("paren_transpose", "(x + y).transpose(0, 1)"), ("paren_mean_kw", "(x * y).mean(dim=-1, keepdim=True)"),
    ("paren_view_varargs", "(x + y).view(2, -1)"), ("paren_nested", "((x + y) * 2).sum(1)"),
    ("abs", "x.abs()"), ("absolute", "x.absolute()"), ("acos", "x.acos()"), ("add", "x.add(y)"),
    ("add_alpha", "x.add(y, alpha=2)"), ("addmm", "x.addmm(y, w)"), ("addcmul", "x.addcmul(y, w, value=0.5)"),
    ("argmax", "x.argmax()"), ("argmax_dim", "x.argmax(dim=1)"), ("argmin", "x.argmin(1)"), ("amax", "x.amax(-1)"),
    ("amin", "x.amin(dim=0)"), ("all", "x.all()"), ("any", "x.any(1)"), ("argsort", "x.argsort(dim=-1)"),
    ("bmm", "x.bmm(y)"), ("ceil", "x.ceil()"), ("chunk", "x.chunk(2)"), ("chunk_dim", "x.chunk(2, dim=1)"),
    ("clamp", "x.clamp(-1, 1)"), ("clamp_min", "x.clamp(min=0)"), ("clip", "x.clip(0.0, 6.0)"),
    ("clone", "x.clone()"), ("contiguous", "x.contiguous()"), ("cos", "x.cos()"), ("cosh", "x.cosh()"),
    ("cumsum", "x.cumsum(0)"), ("cumprod", "x.cumprod(dim=1)"), ("detach", "x.detach()"), ("div", "x.div(2)"),
    ("div_mode", "x.div(y, rounding_mode='floor')"), ("eq", "x.eq(y)"), ("exp", "x.exp()"), ("expm1", "x.expm1()"),
    ("expand", "x.expand(2, -1)"), ("expand_as", "x.expand_as(y)"), ("flatten", "x.flatten(1)"),
    ("flatten_kw", "x.flatten(start_dim=1, end_dim=-1)"), ("flip", "x.flip([0])"), ("float", "x.float()"),
    ("floor", "x.floor()"), ("fmod", "x.fmod(2)"), ("frac", "x.frac()"), ("gather", "x.gather(1, idx)"),
    ("ge", "x.ge(0)"), ("gt", "x.gt(y)"), ("half", "x.half()"), ("index_select", "x.index_select(0, idx)"),
    ("int", "x.int()"), ("isnan", "x.isnan()"), ("le", "x.le(1.0)"), ("lerp", "x.lerp(y, 0.5)"), ("log", "x.log()"),
    ("log1p", "x.log1p()"), ("log2", "x.log2()"), ("logical_not", "x.logical_not()"), ("logsumexp", "x.logsumexp(1)"),
    ("long", "x.long()"), ("lt", "x.lt(y)"), ("masked_fill", "x.masked_fill(y > 0, 0.0)"),
    ("masked_fill_inf", "x.masked_fill(y == 0, float('-inf'))"), ("matmul", "x.matmul(y)"), ("max", "x.max()"),
    ("max_other", "x.max(y)"), ("maximum", "x.maximum(y)"), ("mean", "x.mean()"),
    ("mean_keepdim", "x.mean(dim=-1, keepdim=True)"), ("mean_dims", "x.mean((2, 3))"), ("min", "x.min()"),
    ("mm", "x.mm(y)"), ("mul", "x.mul(2)"), ("ne", "x.ne(y)"), ("neg", "x.neg()"), ("norm", "x.norm()"),
    ("norm_dim", "x.norm(dim=1)"), ("permute", "x.permute(0, 2, 1)"), ("permute_list", "x.permute([1, 0])"),
    ("pow", "x.pow(2)"), ("prod", "x.prod()"), ("reciprocal", "x.reciprocal()"), ("relu", "x.relu()"),
    ("repeat", "x.repeat(2, 1)"), ("reshape", "x.reshape(-1)"), ("reshape_tuple", "x.reshape((2, -1))"),
    ("round", "x.round()"), ("rsqrt", "x.rsqrt()"), ("sigmoid", "x.sigmoid()"), ("sign", "x.sign()"),
    ("sin", "x.sin()"), ("sinh", "x.sinh()"), ("softmax", "x.softmax(-1)"), ("softmax_kw", "x.softmax(dim=1)"),
    ("log_softmax", "x.log_softmax(dim=-1)"), ("split", "x.split(2)"), ("split_dim", "x.split(1, dim=1)"),
    ("sqrt", "x.sqrt()"), ("square", "x.square()"), ("squeeze", "x.squeeze()"), ("squeeze_dim", "x.squeeze(0)"),
    ("std", "x.std()"), ("std_dim", "x.std(dim=1, unbiased=False)"), ("sub", "x.sub(1)"), ("sum", "x.sum()"),
    ("sum_dim", "x.sum(1)"), ("sum_keepdim", "x.sum(dim=-1, keepdim=True)"), ("t", "x.t()"), ("tanh", "x.tanh()"),
    ("to_dtype", "x.to(torch.float64)"), ("to_other", "x.to(y)"), ("topk", "x.topk(2)"),
    ("transpose", "x.transpose(0, 1)"), ("transpose_neg", "x.transpose(-2, -1)"), ("tril", "x.tril()"),
    ("triu", "x.triu(diagonal=1)"), ("trunc", "x.trunc()"), ("type_as", "x.type_as(y)"), ("unbind", "x.unbind(0)"),
    ("unsqueeze", "x.unsqueeze(0)"), ("unsqueeze_neg", "x.unsqueeze(-1)"), ("var", "x.var()"), ("view", "x.view(-1)"),
    ("view_two", "x.view(2, -1)"), ("view_as", "x.view_as(y)"), ("where", "x.where(y > 0, w)"),
    ("add_", "x.add_(1)"), ("mul_", "x.mul_(y)"), ("clamp_", "x.clamp_(0, 1)"), ("zero_", "x.zero_()"),
    ("fill_", "x.fill_(1.0)"), ("masked_fill_", "x.masked_fill_(y > 0, 1.0)"), ("relu_", "x.relu_()"),
    ("sigmoid_", "x.sigmoid_()"), ("copy_", "x.copy_(y)"), ("new_zeros", "x.new_zeros((2, 3))"),
    ("new_ones", "x.new_ones([2])"), ("new_full", "x.new_full((2,), 3.0)"), ("narrow", "x.narrow(0, 0, 1)"),
    ("select", "x.select(0, 1)"), ("roll", "x.roll(1, 0)"), ("movedim", "x.movedim(0, 1)"),
    ("nan_to_num", "x.nan_to_num()"), ("masked_select", "x.masked_select(y > 0)"), ("nonzero", "x.nonzero()"),
    ("cummax", "x.cummax(0)"), ("kthvalue", "x.kthvalue(1)"), ("median", "x.median()"), ("sort", "x.sort()"),
    ("logical_and", "x.logical_and(y)"), ("bool", "x.bool()"), ("double", "x.double()"),
    ("unfold", "x.unfold(0, 2, 1)"), ("exp_then_sum", "x.exp().sum(-1)"), ("type_float", "x.type(torch.float32)"),
    ("repeat_interleave", "x.repeat_interleave(2)"), ("diagonal", "x.diagonal()"), ("tile", "x.tile((2,))"),
]

# --- Python operators --------------------------------------------------------------------------------
OPERATORS = [
    ("add", "x + y"), ("sub", "x - y"), ("mul", "x * y"), ("truediv", "x / y"), ("floordiv", "x // y"),
    ("mod", "x % y"), ("pow", "x ** y"), ("matmul", "x @ y"), ("and", "x & y"), ("or", "x | y"), ("xor", "x ^ y"),
    ("lshift", "x << y"), ("rshift", "x >> y"), ("eq", "x == y"), ("ne", "x != y"), ("lt", "x < y"),
    ("le", "x <= y"), ("gt", "x > y"), ("ge", "x >= y"), ("neg", "-x"), ("invert", "~x"), ("abs", "abs(x)"),
    ("add_int", "x + 1"), ("add_float", "x + 1.5"), ("sub_float", "x - 1.5"), ("mul_int", "x * 2"),
    ("div_float", "x / 2.0"), ("pow_int", "x ** 2"), ("pow_half", "x ** 0.5"), ("radd", "1 + x"),
    ("rsub", "1 - x"), ("rmul", "2 * x"), ("rtruediv", "1 / x"), ("rpow", "2 ** x"), ("rfloordiv", "3 // x"),
    ("rmod", "3 % x"), ("chain", "x * y + x - y / 2"), ("neg_mul", "-(x * y)"), ("iadd", "_iadd(x, y)"),
    ("gt_float", "x > 0.5"), ("eq_int", "x == 0"), ("not_eq", "(x != 0) & (y != 0)"),
]

# --- Indexing ----------------------------------------------------------------------------------------
INDEXING = [
    ("int", "x[0]"), ("neg_int", "x[-1]"), ("slice", "x[1:3]"), ("slice_step", "x[::2]"), ("slice_open", "x[1:]"),
    ("col", "x[:, 0]"), ("col_slice", "x[:, 0:1]"), ("ellipsis", "x[..., 1]"), ("ellipsis_slice", "x[..., :2]"),
    ("none", "x[None]"), ("none_mid", "x[:, None]"), ("neg_slice", "x[:, -2:]"), ("tensor", "x[idx]"),
    ("mask", "x[y > 0]"), ("two_ints", "x[0, 1]"), ("mixed", "x[0, :, None]"), ("nested", "x[0][1]"),
    ("tuple_item", "_first(x.max(1))"), ("setitem", "_setitem(x)"),
]

# --- Shape arithmetic --------------------------------------------------------------------------------
SHAPES = [
    ("size0", "x.view(x.size(0), -1)"), ("shape_last", "x.reshape(-1, x.shape[-1])"), ("dim", "x.sum(x.dim() - 1)"),
    ("size_all", "x.new_zeros(x.size())"), ("numel", "x.view(x.numel())"), ("shape_mul", "x.view(x.shape[0] * x.shape[1])"),
    ("size_neg", "x.reshape(x.size(-1), -1)"), ("shape_tuple", "x.expand(x.shape[0], 4)"),
    ("size_kw", "x.view(x.size(dim=0), -1)"), ("size_div", "x.view(x.size(0) // 2, -1)"),
]

# --- torch functions ---------------------------------------------------------------------------------
TORCH = [
    ("relu", "torch.relu(x)"), ("sigmoid", "torch.sigmoid(x)"), ("cat", "torch.cat([x, y], dim=1)"),
    ("cat_pos", "torch.cat((x, y), 0)"), ("stack", "torch.stack([x, y])"), ("flatten", "torch.flatten(x, 1)"),
    ("softmax", "torch.softmax(x, dim=1)"), ("matmul", "torch.matmul(x, y)"), ("add", "torch.add(x, y)"),
    ("add_alpha", "torch.add(x, y, alpha=2)"), ("mul", "torch.mul(x, 2)"), ("sum", "torch.sum(x, dim=1, keepdim=True)"),
    ("mean", "torch.mean(x)"), ("max_dim", "torch.max(x, 1)"), ("max_other", "torch.max(x, y)"),
    ("where", "torch.where(x > 0, x, y)"), ("zeros_like", "torch.zeros_like(x)"), ("ones_like", "torch.ones_like(x)"),
    ("rand_like", "torch.rand_like(x)"), ("transpose", "torch.transpose(x, 0, 1)"), ("einsum", "torch.einsum('ij,jk->ik', x, y)"),
    ("clamp", "torch.clamp(x, min=0.0, max=1.0)"), ("exp", "torch.exp(x)"), ("tanh", "torch.tanh(x)"),
    ("bmm", "torch.bmm(x, y)"), ("chunk", "torch.chunk(x, 2, 1)"), ("split", "torch.split(x, 2)"),
    ("squeeze", "torch.squeeze(x, 1)"), ("unsqueeze", "torch.unsqueeze(x, 0)"), ("abs", "torch.abs(x)"),
    ("arange", "torch.arange(4) + x"), ("zeros", "torch.zeros(2, 3) + x"), ("full", "torch.full((2,), 1.5) * x"),
    ("addmm", "torch.addmm(x, y, w)"), ("baddbmm", "torch.baddbmm(x, y, w)"), ("norm", "torch.norm(x)"),
    ("logsumexp", "torch.logsumexp(x, dim=1)"), ("cumsum", "torch.cumsum(x, dim=0)"), ("argmax", "torch.argmax(x, dim=-1)"),
    ("topk", "torch.topk(x, 3)"), ("gather", "torch.gather(x, 1, idx)"), ("masked_fill", "torch.masked_fill(x, y > 0, 0.0)"),
    ("permute", "torch.permute(x, (1, 0))"), ("reshape", "torch.reshape(x, (-1,))"), ("neg", "torch.neg(x)"),
    ("special_erf", "torch.special.erf(x)"), ("linalg_norm", "torch.linalg.norm(x)"), ("fft_fft", "torch.fft.fft(x)"),
    ("tensor_const", "x * torch.tensor(2.0)"), ("sigmoid_of_sum", "torch.sigmoid(x + y)"),
    # A quantized dtype as an argument (hostile round five, 11: `unknown dtype "QInt8"` at the open).
    ("quantize_per_tensor", "torch.quantize_per_tensor(x, 0.1, 10, torch.qint8).dequantize()"),
]

# --- Constants, returns, signatures, training branches, modules: whole forwards ----------------------
# (name, forward source, __init__ body) with `def forward` written out.
# --- Literals in every spelling TorchScript accepts (issue 54, class 1) --------------------------------
# TorchScript's range of a literal is len(str(value)) long, not its text: `2.5e3` once turned the
# multiplication before it into an addition, and `1e-3` swallowed the bracket after it.
LITERALS = [
    ("sci", "x * 2.5e3 + 1e-3"), ("sci_compare", "(x > 1e-3).float()"), ("dots", "x * 1e-3 + 2."),
    ("leading_dot", "(x - .5) * 1E3"), ("exponent_signs", "torch.clamp(x, min=-1e-6, max=2.5E+2)"),
    ("hex", "x * 0x10"), ("last_in_function", "x * 1e3"), ("big", "x * 1e10"),
    ("string", "F.pad(x, [1, 1], mode='reflect') * 1.50"),
]

WHOLE = [
    ("const_folded_pow", "def forward(self, x):\n    return x * (2 ** 0.5)"),
    ("const_math_sqrt", "def forward(self, x):\n    return x / math.sqrt(8)"),
    ("const_math_pi", "def forward(self, x):\n    return x * math.pi"),
    ("const_attr_float", "def forward(self, x):\n    return x * self.scale", "self.scale = 0.125"),
    ("const_attr_int", "def forward(self, x):\n    return x.view(-1, self.n)", "self.n = 4"),
    ("const_expr", "def forward(self, x):\n    return x + (3 * 4 - 2)"),
    ("const_neg_float", "def forward(self, x):\n    return x.clamp(-0.5, 0.5) - 1e-06"),
    ("const_inf", "def forward(self, x):\n    return x.clamp(max=float('inf'))"),
    ("const_string_kw", "def forward(self, x, y):\n    return F.mse_loss(x, y, reduction='none')"),
    ("const_none_arg", "def forward(self, x):\n    return x.sum(dim=None)"),
    ("const_bool", "def forward(self, x):\n    return x.mean(-1, True)"),
    ("const_dtype", "def forward(self, x):\n    return x.to(dtype=torch.float16)"),
    ("const_list_arg", "def forward(self, x):\n    return x.permute([0, 1])"),
    ("ret_tuple", "def forward(self, x, y):\n    return x + y, x - y"),
    ("ret_list", "def forward(self, x, y):\n    return [x * y, x]"),
    ("ret_dict", "def forward(self, x, y):\n    return {'sum': x + y, 'diff': x - y}"),
    ("ret_nested", "def forward(self, x, y):\n    return (x, (y, x + y))"),
    ("ret_input", "def forward(self, x):\n    return x"),
    ("ret_unpack", "def forward(self, x):\n    a, b = x.chunk(2)\n    return b * a"),
    ("ret_max_unpack", "def forward(self, x):\n    values, indices = torch.max(x, 1)\n    return values + indices"),
    ("sig_annotated", "def forward(self, x: torch.Tensor) -> torch.Tensor:\n    return torch.relu(x)"),
    ("sig_int_default", "def forward(self, x: torch.Tensor, k: int = 2) -> torch.Tensor:\n    return x[:, 1:k]"),
    ("sig_float_default", "def forward(self, x, scale: float = 0.5):\n    return x * scale"),
    ("sig_two_tensors", "def forward(self, x: torch.Tensor, y: torch.Tensor):\n    return x * y"),
    ("sig_tuple_return", "def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:\n    return x, -x"),
    ("sig_unused_input", "def forward(self, x, y):\n    return x.exp()"),
    ("sig_kwarg_call", "def forward(self, x):\n    return torch.sum(input=x, dim=0)"),
    ("train_branch", "def forward(self, x):\n    if self.training:\n        x = x * 2\n    return x + 1"),
    ("train_dropout", "def forward(self, x):\n    return F.dropout(x, p=0.5, training=self.training)"),
    ("train_else", "def forward(self, x):\n    if self.training:\n        return x.relu()\n    else:\n        return x.sigmoid()"),
    ("flag_branch", "def forward(self, x):\n    if self.use_bias:\n        x = x + 1\n    return x", "self.use_bias = True"),
    ("none_attr", "def forward(self, x):\n    if self.proj is not None:\n        x = self.proj(x)\n    return x",
     "self.proj = None"),
    ("mod_linear", "def forward(self, x):\n    return self.fc(x)", "self.fc = nn.Linear(4, 4)"),
    ("mod_reuse", "def forward(self, x):\n    return self.fc(self.fc(x))", "self.fc = nn.Linear(4, 4)"),
    ("mod_reuse_act", "def forward(self, x):\n    y = self.act(self.fc(x))\n    return self.act(self.fc(y))",
     "self.fc = nn.Linear(4, 4)\n        self.act = nn.ReLU()"),
    ("mod_sequential", "def forward(self, x):\n    return self.seq(x)",
     "self.seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))"),
    ("mod_nested_seq", "def forward(self, x):\n    return self.seq(x)",
     "self.seq = nn.Sequential(nn.Sequential(nn.Linear(4, 4), nn.Tanh()), nn.Linear(4, 1))"),
    ("mod_modulelist", "def forward(self, x):\n    for layer in self.layers:\n        x = layer(x)\n    return x",
     "self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])"),
    ("mod_moduledict", "def forward(self, x):\n    return self.heads['a'](x) + self.heads['b'](x)",
     "self.heads = nn.ModuleDict({'a': nn.Linear(4, 2), 'b': nn.Linear(4, 2)})"),
    ("mod_deep", "def forward(self, x):\n    return self.outer(x)", "self.outer = Outer()"),
    ("mod_param", "def forward(self, x):\n    return x @ self.weight", "self.weight = nn.Parameter(torch.randn(4, 4))"),
    ("mod_buffer", "def forward(self, x):\n    return (x - self.mean) / self.std",
     "self.register_buffer('mean', torch.zeros(4))\n        self.register_buffer('std', torch.ones(4))"),
    ("mod_param_order", "def forward(self, x):\n    return F.linear(x, self.weight, self.bias)",
     "self.weight = nn.Parameter(torch.randn(4, 4))\n        self.bias = nn.Parameter(torch.zeros(4))"),
    ("mod_param_twice", "def forward(self, x):\n    return x * self.w + self.w", "self.w = nn.Parameter(torch.ones(4))"),
    ("mod_conv_bn", "def forward(self, x):\n    return self.bn(self.conv(x)).relu()",
     "self.conv = nn.Conv2d(3, 8, 3, padding=1)\n        self.bn = nn.BatchNorm2d(8)"),
    ("mod_layernorm", "def forward(self, x):\n    return self.norm(x)", "self.norm = nn.LayerNorm(4)"),
    ("mod_embedding", "def forward(self, idx):\n    return self.emb(idx).sum(1)", "self.emb = nn.Embedding(10, 4)"),
    ("mod_mha", "def forward(self, x):\n    out, _ = self.attn(x, x, x)\n    return out",
     "self.attn = nn.MultiheadAttention(8, 2)"),
    ("mod_mha_need", "def forward(self, x):\n    return self.attn(x, x, x, need_weights=False)[0]",
     "self.attn = nn.MultiheadAttention(8, 2)"),
    ("mod_lstm", "def forward(self, x):\n    out, (h, c) = self.lstm(x)\n    return out + h.sum()",
     "self.lstm = nn.LSTM(4, 4)"),
    ("mod_gru", "def forward(self, x):\n    return self.gru(x)[0]", "self.gru = nn.GRU(4, 4)"),
    ("mod_transformer_layer", "def forward(self, x):\n    return self.layer(x)",
     "self.layer = nn.TransformerEncoderLayer(8, 2, 16)"),
    ("mod_custom_child", "def forward(self, x):\n    return self.block(x) + self.block(x)", "self.block = Block()"),
    ("mod_function_call", "def forward(self, x):\n    return _helper(x, 2)"),
    ("mod_identity", "def forward(self, x):\n    return self.id(x) * 2", "self.id = nn.Identity()"),
    ("mod_flatten_linear", "def forward(self, x):\n    return self.fc(self.flat(x))",
     "self.flat = nn.Flatten()\n        self.fc = nn.Linear(16, 2)"),
    ("mod_dropout_eval", "def forward(self, x):\n    return self.drop(x)", "self.drop = nn.Dropout(0.1)"),
    ("attention_block",
     "def forward(self, x):\n    q = self.q(x)\n    k = self.k(x)\n    v = self.v(x)\n"
     "    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))\n"
     "    att = att.masked_fill(self.mask[:, :8, :8] == 0, float('-inf'))\n"
     "    att = F.softmax(att, dim=-1)\n    return self.proj(att @ v)",
     "self.q = nn.Linear(8, 8)\n        self.k = nn.Linear(8, 8)\n        self.v = nn.Linear(8, 8)\n"
     "        self.proj = nn.Linear(8, 8)\n        self.register_buffer('mask', torch.tril(torch.ones(1, 16, 16)))"),
    ("mlp_pipeline", "def forward(self, x):\n    h = F.gelu(self.fc1(x))\n    h = F.dropout(h, 0.1, self.training)\n"
     "    return self.norm(self.fc2(h) + x)",
     "self.fc1 = nn.Linear(8, 16)\n        self.fc2 = nn.Linear(16, 8)\n        self.norm = nn.LayerNorm(8)"),
    ("conv_reshape", "def forward(self, x):\n    y = F.relu(self.conv(x))\n    y = F.max_pool2d(y, 2)\n"
     "    return self.fc(y.view(y.size(0), -1))",
     "self.conv = nn.Conv2d(1, 4, 3)\n        self.fc = nn.Linear(4 * 13 * 13, 10)"),
    ("fx_format_example",
     "def forward(self, x: torch.Tensor, k: int = 2) -> torch.Tensor:\n    y = self.act(self.fc(x))\n"
     "    y = self.act(self.fc(y))\n    z = F.relu(y) + F.dropout(y, p=0.5, training=self.training)\n"
     "    z = z.view(z.size(0), -1)[:, 1:k] * (2 ** 0.5)\n    return torch.cat([z, -z], dim=1).sum(dim=-1, keepdim=True)",
     "self.fc = nn.Linear(4, 4)\n        self.act = nn.ReLU()"),
    # Issue 54's classes: what the source says and the compiled graph no longer does.
    ("src_attr_order_layer_norm", "def forward(self, x):\n    return F.layer_norm(x, self.w.shape, self.w, self.b)",
     "self.w = nn.Parameter(torch.ones(4))\n        self.b = nn.Parameter(torch.zeros(4))"),
    ("src_attr_order_matmul", "def forward(self, x, y):\n    return torch.relu(x).T @ torch.relu(y)"),
    ("src_dead_read", "def forward(self, x):\n    c = x.shape[1]\n    c = x.shape[0]\n    return x.view(c, -1)"),
    # The item of a leaf's tuple result (a prim::TupleIndex, which has no source range) read dead.
    ("src_dead_read_of_call_item", "def forward(self, x):\n    v = self.gru(x)[0]\n    u = v[0]\n"
     "    c = v.shape[1]\n    return v * 2", "self.gru = nn.GRU(4, 4, batch_first=True)"),
    # Dead statements that are not reads: overwritten before any read, or never read (FX records
    # each operation; TorchScript removed them).
    ("src_dead_overwritten_ops", "def forward(self, x):\n    h = x + 1\n    y = x.view(-1)\n"
     "    n = torch.relu(x).sum(1, keepdim=True)\n    h = torch.sigmoid(x) * 2\n    return h"),
    # A WaveNet stack: the last iteration's `h = h + r(z)` is never read after the loop. TorchScript
    # keeps the call r(z) (a call may have side effects) and removes the add; FX records both.
    ("src_dead_loop_carried", "def forward(self, x):\n    h = x\n    out = torch.zeros_like(x)\n"
     "    for r, s in zip(self.res, self.skip):\n        z = torch.tanh(h)\n        out = out + s(z)\n"
     "        h = h + r(z)\n    return out",
     "self.res = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n"
     "        self.skip = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])"),
    # An nn.GRU's out[0] and out[1][0] read in a loop TorchScript unrolled: one getitem per read.
    ("src_gru_reads_in_loop", "def forward(self, x):\n    acc = x\n    for lin in self.lins:\n"
     "        out = self.gru(lin(acc))\n        acc = out[0] + out[1][0].unsqueeze(1)\n    return acc",
     "self.gru = nn.GRU(4, 4, batch_first=True)\n        self.lins = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])"),
    # Items of a tuple kept in a variable, read and assigned to names (TorchScript has no node for
    # either statement): `top[0]` and `vm[1]` are getitems where the statements stand, `top.indices`
    # an Attribute made where `i` is first used.
    ("src_tuple_reads_assigned", "def forward(self, x):\n    top = torch.topk(x, 2, dim=-1)\n"
     "    w, i = top[0], top.indices\n    v = top[1]\n    y = x * 2\n    return w * i.float() + v + y"),
    ("src_item_read_assigned", "def forward(self, x):\n    vm = torch.var_mean(x, 1, keepdim=True)\n"
     "    m = vm[1]\n    y = x + 1\n    return (y - m) / vm[0]"),
    # Expressions alone as statements, removed by TorchScript as dead; FX records the calls.
    ("src_dead_expression_statements", "def forward(self, x):\n    x.sum(-1)\n    torch.relu(x)\n"
     "    y = x * 2\n    x.shape\n    return y"),
    # Expressions alone that start with a bracket or an operator, and an item of a tuple target
    # never read: TorchScript drops them as dead, FX records each where it stands.
    ("src_dead_bracket_statements", "def forward(self, x):\n    (x + 1)\n    -x.abs()\n"
     "    [x.sum(),\n     x.mean()]\n    return x * 2"),
    ("src_tuple_target_dead_item", "def forward(self, x):\n    a, b = x * 2, torch.relu(x).sum(dim=(0, 1))\n"
     "    q, k = x[..., :2], x[..., 2:]\n    return a + q.sum()"),
    ("src_callee_real", "def forward(self, x):\n    y = torch.view_as_complex(x)\n    return y.real + y.imag"),
    ("src_written_pool", "def forward(self, x):\n    return F.avg_pool2d(x, self.sizes[0])", "self.sizes = [2, 4]"),
    # Tensors inside nested container attributes (issue 56, 9): Python indexes them while FX
    # traces, and each tensor found is a `_tensor_constantN`.
    ("const_attr_nested_list_tensors", "def forward(self, x):\n    return x + self.ll[0][1] + self.ll[1][0]",
     "self.ll: List[List[torch.Tensor]] = [[torch.ones(4), torch.zeros(4)], [torch.full((4,), 2.0)]]"),
    ("const_attr_dict_of_list_tensors", "def forward(self, x):\n    return x * self.dl['b'][1]",
     "self.dl: Dict[str, List[torch.Tensor]] = {'a': [torch.ones(4)], 'b': [torch.zeros(4), torch.full((4,), 3.0)]}"),
    ("const_attr_nested_tuple_tensors", "def forward(self, x):\n    return x - self.nt[0][1] * self.nt[1]",
     "self.nt: Tuple[Tuple[torch.Tensor, torch.Tensor], torch.Tensor] = "
     "((torch.ones(4), torch.full((4,), 2.0)), torch.full((4,), 0.5))"),
    ("src_written_dtype", "def forward(self, x):\n    return F.softmax(x, dim=-1, dtype=torch.float32)"),
    ("src_written_dtype_method", "def forward(self, x):\n    return x.sum(dtype=torch.float64) + x.cumsum(0, dtype=torch.float)"),
    ("src_tuple_order", "def forward(self, x):\n    vm = torch.var_mean(x, 1, keepdim=True)\n"
     "    return (x - vm[1]) / torch.sqrt(vm[0] + 1e-5)"),
    ("src_meshgrid_constant", "def forward(self, x):\n    gy, gx = torch.meshgrid(torch.arange(3), torch.arange(4), indexing='ij')\n"
     "    return x + (gy * 4 + gx).float()"),
    ("src_constant_beside_parameter", "def forward(self, x):\n    y = torch.arange(4) + x\n"
     "    return self.sub(y) + self._tensor_constant0 + torch.ones(4) * 3",
     "self._tensor_constant0 = nn.Parameter(torch.full((4,), 2.0))\n        self.sub = Masked(torch.ones(4))"),
    ("src_scripting_linear", "def forward(self, x):\n    return self.fc(x) + self.fc.weight.sum()",
     "self.fc = ScriptingLinear(4, 4)"),
    ("src_staticmethod_constant", "def forward(self, x):\n    return self.grid(x) * 2",
     "self.grid = Grid()"),
    ("src_dict_written_in_loop", "def forward(self, x):\n    outs: Dict[str, torch.Tensor] = {}\n"
     "    for name, head in self.heads.items():\n        outs[name] = head(x)\n"
     "    return torch.stack([outs['a'], outs['b']], dim=0).mean(0)",
     "self.heads = nn.ModuleDict({'a': nn.Linear(4, 4), 'b': nn.Linear(4, 4)})"),
    ("src_buffer_indexed_by_two", "def forward(self, a, b):\n"
     "    return self.t[a.abs().long() % 4, b.abs().long() % 5]",
     "self.register_buffer('t', torch.randn(4, 5))"),
    ("src_shared_buffer", "def forward(self, x):\n    return self.a(x) + self.b(x)",
     "mask = torch.ones(4)\n        self.a = Masked(mask)\n        self.b = Masked(mask)"),
]

# Helpers the generated module file defines before the cases (plain Python, traced through by FX
# and compiled by TorchScript).
PRELUDE = '''
def _helper(x, n: int):
    return x * n + 1


def _first(t: Tuple[torch.Tensor, torch.Tensor]):
    return t[0]


def _iadd(x, y):
    x += y
    return x


def _setitem(x):
    x[0] = 1.0
    return x


class Masked(nn.Module):
    def __init__(self, mask: torch.Tensor):
        super().__init__()
        self.register_buffer("mask", mask)

    def forward(self, x):
        return x * self.mask


class Grid(nn.Module):
    # Work on constants in a staticmethod: Python runs it while FX traces (issue 54, class 7).
    @staticmethod
    def coords(h: int, w: int):
        gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
        return torch.stack([gy, gx], 0).float()

    def forward(self, x):
        return x + self.coords(2, 4).flatten(1)


class ScriptingLinear(nn.Linear):
    # timm's Linear: TorchScript compiles the is_scripting() side, FX runs the other.
    def forward(self, input):
        if torch.jit.is_scripting():
            bias = self.bias.to(dtype=input.dtype) if self.bias is not None else None
            return F.linear(input, self.weight.to(dtype=input.dtype), bias=bias)
        else:
            return F.linear(input, self.weight, self.bias)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.tanh(self.fc(x))


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x).relu()


class Middle(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()
        self.scale = 0.5

    def forward(self, x):
        return self.inner(x) * self.scale


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.middle = Middle()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(self.middle(x))
'''

# Forward parameters of the one-expression cases: the names an expression uses, in this order.
EXPRESSION_PARAMS = ["x", "y", "w", "idx"]


def expression_cases():
    """(name, forward source, init source) for every one-expression case."""
    groups = [("fn", FUNCTIONAL), ("meth", METHODS), ("op", OPERATORS), ("idx", INDEXING), ("shape", SHAPES),
              ("torch", TORCH), ("lit", LITERALS)]
    import re
    for prefix, cases in groups:
        for name, expr in cases:
            used = set(re.findall(r"[A-Za-z_]\w*", expr))
            params = [p for p in EXPRESSION_PARAMS if p in used] or ["x"]
            yield (f"{prefix}_{name}", f"def forward(self, {', '.join(params)}):\n    return {expr}", "")


def whole_cases():
    for case in WHOLE:
        yield (case[0], case[1], case[2] if len(case) > 2 else "")


def all_cases():
    return list(expression_cases()) + list(whole_cases())
