// The ExecuTorch operator table: an operator's full name ("aten::addmm.out") to the rule that
// computes it with kiln library functions. Rules read their arguments through OpCall.
#pragma once
#include <string>
#include <vector>

#include "models/executorch/frame.h"

namespace kiln::executorch {

using OpRule = void (*)(OpCall&);

// nullptr when the operator has no rule.
OpRule find_rule(const std::string& full_name);
// Every operator with a rule, sorted.
std::vector<std::string> supported_operators();

// Rules defined outside operator_rules.cpp (the table lists them all).
namespace rules {
// operator_rules_nn.cpp: linear algebra, convolution, normalization, pooling, softmax.
void addmm(OpCall& c);
void mm(OpCall& c);
void bmm(OpCall& c);
void convolution(OpCall& c);
void batch_norm_no_training(OpCall& c);
void layer_norm(OpCall& c);
void max_pool2d_with_indices(OpCall& c);
void avg_pool2d(OpCall& c);
void softmax(OpCall& c);
void log_softmax(OpCall& c);
void embedding(OpCall& c);
void gelu(OpCall& c);
void group_norm(OpCall& c);
void upsample_nearest2d(OpCall& c);
// operator_rules_shape.cpp: views and copies, joins and splits, creation.
void permute(OpCall& c);
void view(OpCall& c);
void unsqueeze(OpCall& c);
void squeeze_dims(OpCall& c);
void expand(OpCall& c);
void slice(OpCall& c);
void select(OpCall& c);
void cat(OpCall& c);
void split_with_sizes(OpCall& c);
void to_dim_order_copy(OpCall& c);
void arange_start(OpCall& c);
void arange(OpCall& c);
void full(OpCall& c);
void full_like(OpCall& c);
void scalar_tensor(OpCall& c);
void sym_size(OpCall& c);
void index_select(OpCall& c);
void gather(OpCall& c);
void constant_pad(OpCall& c);
}  // namespace rules

}  // namespace kiln::executorch
