// Float64 CPU reference of attention forward (with LSE) and backward, used by the GPU tests.
//
// All tensors are dense, layout (batch, seqlen, heads, head_dim), double precision; the LSE is
// (batch, heads_q, seqlen_q), natural log. GQA/MQA: query head h reads kv head
// h / (heads_q / heads_kv). The causal mask is aligned bottom-right (FlashAttention): query row
// r sees key c iff c <= r + (seqlen_k - seqlen_q). A row that sees no key has output 0,
// lse = -inf and zero gradient.
#pragma once

namespace dash::ref {

struct RefShape {
  int batch = 0;
  int seqlen_q = 0;
  int seqlen_k = 0;
  int heads_q = 0;
  int heads_kv = 0;   // heads_q must be a multiple of heads_kv
  int head_dim = 0;
  bool causal = false;
  double softmax_scale = 0.0;  // <= 0 selects 1/sqrt(head_dim)
};

// Throws std::invalid_argument for non-positive batch/heads/head_dim, negative seqlens or
// heads_q not a multiple of heads_kv.
void validate(const RefShape& shape);

double effective_scale(const RefShape& shape);

// Number of keys query row r sees (0 .. seqlen_k); visible keys are 0 .. n-1.
int visible_keys(const RefShape& shape, int row);

// o: (batch, seqlen_q, heads_q, head_dim); lse: (batch, heads_q, seqlen_q).
// Online over keys per row, never materialises S; parallel over (batch, head).
void attention_forward(const RefShape& shape, const double* q, const double* k, const double* v,
                       double* o, double* lse);

// Standard backward from the saved lse: P = exp(scale*QK^T - lse), dV = P^T dO, dP = dO V^T,
// D = rowsum(dO*O), dS = P*(dP - D), dQ = scale*dS K, dK = scale*dS^T Q; dK/dV of a kv head are
// summed over its query heads (in ascending head order, so results are deterministic).
// dq has q's shape; dk, dv have k's shape. All outputs are overwritten.
void attention_backward(const RefShape& shape, const double* q, const double* k, const double* v,
                        const double* o, const double* lse, const double* dout, double* dq,
                        double* dk, double* dv);

// Naive: materialises S = scale*QK^T masked with -inf, P = softmax(S) (rows with no visible key
// give P = 0), O = PV. Single-threaded; used to test attention_forward.
void attention_forward_naive(const RefShape& shape, const double* q, const double* k,
                             const double* v, double* o);

}  // namespace dash::ref
