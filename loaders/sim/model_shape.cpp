// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/model_shape.h"

#include <array>
#include <cctype>

namespace wl::sim {
namespace {

ModelShape make(std::string name, int layers, int hidden, int ffn, int heads, int groups,
                int experts, int topk, int vocab, bool tied, NormKind norm, MlpKind mlp,
                bool rotary, int seq) {
  ModelShape m;
  m.name = std::move(name);
  m.layers = layers, m.hidden = hidden, m.ffn = ffn, m.heads = heads, m.query_groups = groups;
  m.experts = experts, m.topk = topk, m.vocab = vocab, m.tied_embeddings = tied;
  m.norm = norm, m.mlp = mlp, m.rotary = rotary, m.default_seq_len = seq;
  return m;
}

const std::array<ModelShape, 6>& models() {
  using N = NormKind;
  using M = MlpKind;
  static const std::array<ModelShape, 6> m = {
      make("GPT3-175B", 96, 12288, 49152, 96, 96, 0, 0, 51200, true, N::LayerNorm, M::Gelu, false,
           2048),
      make("Llama3-70B", 80, 8192, 28672, 64, 8, 0, 0, 128256, false, N::RmsNorm, M::SwiGlu, true,
           8192),
      make("Mixtral-8x7B", 32, 4096, 14336, 32, 8, 8, 2, 32000, false, N::RmsNorm, M::SwiGlu, true,
           4096),
      make("Mixtral-8x22B", 56, 6144, 16384, 48, 8, 8, 2, 32768, false, N::RmsNorm, M::SwiGlu, true,
           4096),
      make("Llama3-8B", 32, 4096, 14336, 32, 8, 0, 0, 128256, false, N::RmsNorm, M::SwiGlu, true,
           8192),
      make("TinyLlama-1.1B", 22, 2048, 5632, 32, 4, 0, 0, 32000, false, N::RmsNorm, M::SwiGlu, true,
           2048),
  };
  return m;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

std::span<const ModelShape> builtinModels() {
  return models();
}

const ModelShape* findModel(std::string_view name) {
  for (const ModelShape& m : models())
    if (equalsIgnoreCase(m.name, name)) return &m;
  return nullptr;
}

std::string modelNames() {
  std::string s;
  for (const ModelShape& m : models())
    s += (s.empty() ? "" : ", ") + m.name;
  return s;
}

}  // namespace wl::sim
