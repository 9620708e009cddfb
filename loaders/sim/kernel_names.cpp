// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/kernel_names.h"

namespace wl::sim {

KernelNames kernelNamesFor(Vendor v) {
  KernelNames k;
  k.vendor = v;
  // PyTorch and apex kernels are the same on CUDA and ROCm builds.
  k.residualAdd =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::"
      "BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, "
      "std::array<char*, 3ul>)";
  k.geluForward =
      "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::"
      "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}"
      "::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::"
      "GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()"
      "() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, "
      "2ul>)";
  k.geluBackward =
      "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl("
      "at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()"
      "#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> "
      ">(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)"
      "::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16,"
      " c10::BFloat16)#1}, std::array<char*, 3ul>)";
  k.embeddingForward =
      "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned "
      "int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::"
      "detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long "
      "const, unsigned int>, int, int, unsigned int, unsigned int, long)";
  k.embeddingBackward =
      "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, "
      "float, long>(long const*, c10::BFloat16 const*, float*, int, long, int, int)";
  k.lossForward =
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, float, "
      "at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(float*, c10::BFloat16 const*, "
      "int)";
  k.lossBackward =
      "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, "
      "float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, "
      "float const*, float const*, long)";
  k.routerTopk =
      "void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(at::cuda::detail::"
      "TensorInfo<float const, unsigned int>, unsigned int, unsigned int, bool, unsigned int, "
      "unsigned int, at::cuda::detail::TensorInfo<float, unsigned int>, unsigned int, at::cuda::"
      "detail::TensorInfo<long, unsigned int>, unsigned int, float*)";
  k.adam =
      "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float, float, float>, "
      "float, float, float, float, float, float, adamMode_t, float>(long, int volatile*, "
      "TensorListMetadata<4>, AdamFunctor<float, float, float>, float, float, float, float, float, "
      "float, adamMode_t, float)";
  k.l2norm =
      "void multi_tensor_apply_kernel<TensorListMetadata<1>, L2NormFunctor<float, 512, 1>, float*, "
      "float*, bool, int>(long, int volatile*, TensorListMetadata<1>, L2NormFunctor<float, 512, "
      "1>, float*, float*, bool, int)";
  k.scale =
      "void multi_tensor_apply_kernel<TensorListMetadata<2>, ScaleFunctor<float, c10::BFloat16>, "
      "float>(long, int volatile*, TensorListMetadata<2>, ScaleFunctor<float, c10::BFloat16>, "
      "float)";
  k.fill =
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, std::"
      "array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
  k.memset = "Memset (Device)";

  if (v == Vendor::Nvidia) {
    k.gemmForward =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas";
    k.gemmDgrad =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas";
    k.gemmWgrad =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas";
    k.gemmSmall =
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_"
        "segment_k_off_kernel__5x_cublas";
    k.gemmGrouped =
        "void cutlass::Kernel<cutlass::gemm::kernel::GemmGrouped<cutlass::gemm::threadblock::"
        "MmaMultistage<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::bfloat16_t>, cutlass::"
        "epilogue::threadblock::Epilogue<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::"
        "bfloat16_t>, cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle, (cutlass::"
        "gemm::kernel::GroupScheduleMode)0, false> >(cutlass::gemm::kernel::GemmGrouped::Params)";
    k.attentionForward =
        "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
        "cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, "
        "true, false, false, true, true, false, false>(flash::Flash_fwd_params)";
    k.attentionBackwardDot =
        "void flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, "
        "4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::"
        "bfloat16_t> > >(flash::Flash_bwd_params)";
    k.attentionBackward =
        "void flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, "
        "128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, "
        "cutlass::bfloat16_t> >, true, false, false, false, false, true, false, false>(flash::"
        "Flash_bwd_params)";
    k.attentionBackwardConvert =
        "void flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, "
        "false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::"
        "bfloat16_t> > >(flash::Flash_bwd_params, int)";
    k.layerNormForward =
        "void transformer_engine::normalization::ln_fwd_tuned_kernel<transformer_engine::"
        "normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
        "unsigned int, 12288u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::FwdParams)";
    k.layerNormBackward =
        "void transformer_engine::normalization::ln_bwd_tuned_kernel<transformer_engine::"
        "normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
        "unsigned int, 12288u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::BwdParams)";
    k.rmsNormForward =
        "void transformer_engine::normalization::rmsnorm_fwd_tuned_kernel<transformer_engine::"
        "normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
        "unsigned int, 8192u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::FwdParams)";
    k.rmsNormBackward =
        "void transformer_engine::normalization::rmsnorm_bwd_tuned_kernel<transformer_engine::"
        "normalization::Kernel_traits<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, "
        "unsigned int, 8192u, 1u, 1u, 4u, 16u> >(transformer_engine::normalization::BwdParams)";
    k.ropeForward =
        "void transformer_engine::fused_rope_forward_kernel<__nv_bfloat16>(__nv_bfloat16 const*, "
        "float const*, __nv_bfloat16*, int, int, int, int, int, int, int, int, int)";
    k.ropeBackward =
        "void transformer_engine::fused_rope_backward_kernel<__nv_bfloat16>(__nv_bfloat16 const*, "
        "float const*, __nv_bfloat16*, int, int, int, int, int, int, int, int, int)";
    k.swigluForward =
        "void transformer_engine::gated_act_kernel<true, float, transformer_engine::Empty, "
        "transformer_engine::silu<float, float>, __nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 "
        "const*, __nv_bfloat16*, float const*, float*, float*, unsigned long, unsigned long, "
        "transformer_engine::Empty)";
    k.swigluBackward =
        "void transformer_engine::dgated_act_kernel<float, transformer_engine::Empty, "
        "transformer_engine::silu<float, float>, transformer_engine::dsilu<float, float>, "
        "__nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*,"
        " unsigned long, unsigned long)";
    k.permute = "void moe_permute_row_map<__nv_bfloat16, 8>(int const*, int*, int, int, int)";
    k.unpermute =
        "void moe_unpermute_kernel<__nv_bfloat16, float, true>(__nv_bfloat16 const*, "
        "__nv_bfloat16*, int const*, float const*, int, int, int)";
  } else {
    k.gemmForward =
        "Cijk_Alik_Bljk_BBS_BH_MT256x256x64_MI32x32x8x1_SN_1LDSB1_AFC1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
        "GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA128_LBSPPB128_LPA0_LPB0_LRVW8_MIAV0_MIWT4_4_PGR2_PLR1_"
        "SIA3_SS1_SU0_SUM0_SUS0_SVW4_TLDS1_VWA4_VWB4_WS64_WG64_4_1";
    k.gemmDgrad =
        "Cijk_Ailk_Bljk_BBS_BH_MT256x256x64_MI32x32x8x1_SN_1LDSB1_AFC1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
        "GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA128_LBSPPB128_LPA0_LPB0_LRVW8_MIAV0_MIWT4_4_PGR2_PLR1_"
        "SIA3_SS1_SU0_SUM0_SUS0_SVW4_TLDS1_VWA4_VWB4_WS64_WG64_4_1";
    k.gemmWgrad =
        "Cijk_Alik_Bjlk_BBS_BH_MT256x128x64_MI32x32x8x1_SN_1LDSB1_AFC1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
        "GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA128_LBSPPB128_LPA0_LPB0_LRVW8_MIAV0_MIWT4_4_PGR2_PLR1_"
        "SIA3_SS1_SU0_SUM0_SUS0_SVW4_TLDS1_VWA4_VWB4_WS64_WG64_4_1";
    k.gemmSmall =
        "Cijk_Alik_Bljk_BBS_BH_MT64x64x64_MI16x16x16x1_SN_1LDSB0_AFC1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
        "GRVWA8_GRVWB8_GSUAMB_IU1_K1_LBSPPA128_LPA0_LPB0_LRVW8_MIAV0_MIWT2_2_PGR2_PLR1_SIA3_SS1_"
        "SU0_SUM0_SUS0_SVW4_TLDS1_VWA4_VWB4_WS64_WG32_4_1";
    k.gemmGrouped =
        "void ck::kernel_grouped_gemm_xdl_splitk<ck::GridwiseGemm_bk0mk1_bk0nk1_mn_xdlops_v2r4r2<"
        "256, ck::bhalf_t, float, ck::bhalf_t, 256, 128, 4, 8, 32, 32, 4, 2> >(void const*, "
        "unsigned int)";
    k.attentionForward =
        "void ck_tile::kentry<256, 1, ck_tile::FmhaFwdKernel<ck_tile::BlockFmhaPipelineQRKSVSAsync<"
        "ck_tile::BlockFmhaPipelineProblem<ck_tile::bf16_t, float, ck_tile::bf16_t>, 128, 128>, "
        "ck_tile::Default2DEpilogue<float, ck_tile::bf16_t> > >(ck_tile::FmhaFwdKernel::Kargs)";
    k.attentionBackwardDot =
        "void ck_tile::kentry<256, 1, ck_tile::FmhaBwdOGradDotOKernel<ck_tile::"
        "BlockFmhaBwdOGradDotO<ck_tile::bf16_t, float, 128> > >(ck_tile::FmhaBwdOGradDotOKernel::"
        "Kargs)";
    k.attentionBackward =
        "void ck_tile::kentry<256, 1, ck_tile::FmhaBwdDQDKDVKernel<ck_tile::"
        "BlockFmhaBwdDQDKDVPipelineKRKTRVR<ck_tile::bf16_t, float, 128>, "
        "ck_tile::Default2DEpilogue<"
        "float, ck_tile::bf16_t> > >(ck_tile::FmhaBwdDQDKDVKernel::Kargs)";
    k.attentionBackwardConvert =
        "void ck_tile::kentry<256, 1, ck_tile::FmhaBwdConvertQGradKernel<ck_tile::"
        "BlockFmhaBwdConvertQGrad<ck_tile::bf16_t, float, 128> > >(ck_tile::"
        "FmhaBwdConvertQGradKernel::Kargs)";
    k.layerNormForward =
        "void cuApplyLayerNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16*, float*, float*,"
        " c10::BFloat16 const*, int, int, float, c10::BFloat16 const*, c10::BFloat16 const*)";
    k.layerNormBackward =
        "void cuComputeGradInputLayerNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16 "
        "const*, c10::BFloat16 const*, int, int, float const*, float const*, float, c10::BFloat16 "
        "const*, c10::BFloat16*)";
    k.rmsNormForward =
        "void cuApplyRMSNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16*, float*, c10::"
        "BFloat16 const*, int, int, float, c10::BFloat16 const*)";
    k.rmsNormBackward =
        "void cuComputeGradInputRMSNorm<c10::BFloat16, float, c10::BFloat16>(c10::BFloat16 const*,"
        " c10::BFloat16 const*, int, int, float const*, float, c10::BFloat16 const*, "
        "c10::BFloat16*)";
    k.ropeForward =
        "void transformer_engine::fused_rope_forward_kernel<hip_bfloat16>(hip_bfloat16 const*, "
        "float const*, hip_bfloat16*, int, int, int, int, int, int, int, int, int)";
    k.ropeBackward =
        "void transformer_engine::fused_rope_backward_kernel<hip_bfloat16>(hip_bfloat16 const*, "
        "float const*, hip_bfloat16*, int, int, int, int, int, int, int, int, int)";
    k.swigluForward =
        "void at::native::vectorized_elementwise_kernel<4, at::native::silu_kernel(at::"
        "TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::silu_kernel(at::"
        "TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)";
    k.swigluBackward =
        "void at::native::vectorized_elementwise_kernel<4, at::native::silu_backward_kernel(at::"
        "TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::"
        "{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::"
        "silu_backward_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()"
        "#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, "
        "3ul>)";
    k.permute = "void moe_permute_row_map<hip_bfloat16, 8>(int const*, int*, int, int, int)";
    k.unpermute =
        "void moe_unpermute_kernel<hip_bfloat16, float, true>(hip_bfloat16 const*, hip_bfloat16*, "
        "int const*, float const*, int, int, int)";
  }
  return k;
}

std::string KernelNames::collective(CollectiveKind kind, bool fp32, Algorithm algorithm,
                                    Protocol protocol) const {
  if (vendor == Vendor::Amd) return "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)";
  const char* dt = fp32 ? "f32" : "bf16";
  const char* args = "(ncclDevComm*, unsigned long, ncclWork*)";
  const std::string ap = std::string("_") + algorithmName(algorithm) + "_" + protocolName(protocol);
  switch (kind) {
    case CollectiveKind::AllReduce:
      return std::string("ncclDevKernel_AllReduce_Sum_") + dt + ap + args;
    case CollectiveKind::AllGather:
      return std::string("ncclDevKernel_AllGather") + ap + args;
    case CollectiveKind::ReduceScatter:
      return std::string("ncclDevKernel_ReduceScatter_Sum_") + dt + ap + args;
    case CollectiveKind::AllToAll:
    case CollectiveKind::SendRecv:
      return std::string("ncclDevKernel_SendRecv") + args;
  }
  return std::string("ncclDevKernel_Generic") + args;
}

const char* collectiveId(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::AllReduce:
      return "allreduce";
    case CollectiveKind::AllGather:
      return "allgather";
    case CollectiveKind::ReduceScatter:
      return "reducescatter";
    case CollectiveKind::AllToAll:
      return "alltoall";
    case CollectiveKind::SendRecv:
      return "sendrecv";
  }
  return "unknown";
}

}  // namespace wl::sim
