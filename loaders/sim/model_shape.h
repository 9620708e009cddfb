// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Transformer model shapes the simulator knows: the four models of the seed paper's sweeps (shapes
// as in the CharLLM-PPT experiment matrix), Llama3-8B and TinyLlama-1.1B for small and quick runs.
// Vocabulary sizes, norms, activations and embedding tying come from the models' public configs
// (docs/simulator.md cites them).

#include <span>
#include <string>
#include <string_view>

namespace wl::sim {

enum class NormKind { LayerNorm, RmsNorm };
enum class MlpKind { Gelu, SwiGlu };

struct ModelShape {
  std::string name;  // "GPT3-175B"
  int layers = 0;
  int hidden = 0;
  int ffn = 0;  // FFN hidden size (per expert for MoE)
  int heads = 0;
  int query_groups = 0;  // key/value heads (== heads without grouped-query attention)
  int experts = 0;       // 0 for dense models
  int topk = 0;
  int vocab = 0;
  bool tied_embeddings = false;
  NormKind norm = NormKind::LayerNorm;
  MlpKind mlp = MlpKind::Gelu;
  bool rotary = false;
  int default_seq_len = 2048;

  bool moe() const { return experts > 0; }
  int headDim() const { return hidden / heads; }
};

std::span<const ModelShape> builtinModels();
// A built-in model by name, case-insensitive ("gpt3-175b" finds GPT3-175B); nullptr if unknown.
const ModelShape* findModel(std::string_view name);
// "GPT3-175B, Llama3-70B, ..." for messages.
std::string modelNames();

}  // namespace wl::sim
