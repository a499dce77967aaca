/**
 * Discovery endpoints of the local model servers, answered in their documented shapes:
 * routes for the scripted server that make it look like vLLM, llama.cpp, Ollama (model loaded or
 * not), LM Studio, or a server that says nothing about its window.
 */
import type { RouteAnswer, ScriptedServerOptions } from "./scripted-server.js";

export type Flavour = "vllm" | "llamacpp" | "ollama-loaded" | "ollama-not-loaded" | "lmstudio" | "none";
export const FLAVOURS: readonly Flavour[] = [
  "vllm",
  "llamacpp",
  "ollama-loaded",
  "ollama-not-loaded",
  "lmstudio",
  "none",
];

/** What doctor and --trace must name for each flavour. */
export const SOURCE: Record<Flavour, string> = {
  vllm: "vLLM max_model_len",
  llamacpp: "llama.cpp n_ctx",
  "ollama-loaded": "Ollama loaded",
  "ollama-not-loaded": "Ollama default",
  lmstudio: "LM Studio loaded",
  none: "unknown",
};

type Routes = NonNullable<ScriptedServerOptions["routes"]>;
const json =
  (body: unknown): (() => RouteAnswer) =>
  () => ({ body });

/**
 * Routes for `flavour` with a window of `tokens` (for Ollama not loaded: the trained maximum,
 * so the assumed default is min(4096, tokens)). `model` is backend.model.
 */
export function flavourRoutes(flavour: Flavour, tokens: number, model = "qwen2.5"): Routes {
  const created = 1_764_000_000;
  switch (flavour) {
    case "vllm":
      return {
        "GET /v1/models": json({
          object: "list",
          data: [
            {
              id: model,
              object: "model",
              created,
              owned_by: "vllm",
              root: `/models/${model}`,
              parent: null,
              max_model_len: tokens,
              permission: [{ id: "modelperm-1", object: "model_permission", allow_sampling: true }],
            },
          ],
        }),
      };
    case "llamacpp":
      return {
        // meta.n_ctx_train is only the trained maximum: discovery must not use it.
        "GET /v1/models": json({
          object: "list",
          data: [
            {
              id: model,
              object: "model",
              created,
              owned_by: "llamacpp",
              meta: {
                vocab_type: 2,
                n_vocab: 151_936,
                n_ctx_train: 32_768,
                n_embd: 3584,
                n_params: 7_615_616_512,
              },
            },
          ],
        }),
        "GET /props": json({
          default_generation_settings: {
            id: 0,
            id_task: -1,
            n_ctx: tokens,
            speculative: false,
            is_processing: false,
            params: { n_predict: -1, temperature: 0.8, top_k: 40, top_p: 0.95 },
          },
          total_slots: 1,
          model_path: `/models/${model}.gguf`,
          chat_template: "{% for message in messages %}...{% endfor %}",
          build_info: "b6000-abcdef0",
        }),
      };
    case "ollama-loaded":
      return {
        "GET /api/ps": json({
          models: [
            {
              name: `${model}:latest`,
              model: `${model}:latest`,
              size: 5_618_579_456,
              digest: "dae161e27b0e90dd1856c8bb3209201fd6736d8eb66298e75ed87571486f4364",
              details: {
                parent_model: "",
                format: "gguf",
                family: "qwen2",
                families: ["qwen2"],
                parameter_size: "7.6B",
                quantization_level: "Q4_K_M",
              },
              expires_at: "2026-11-30T20:00:00.000000+00:00",
              size_vram: 5_618_579_456,
              context_length: tokens,
            },
          ],
        }),
      };
    case "ollama-not-loaded":
      return {
        "GET /api/ps": json({ models: [] }),
        "POST /api/show": json({
          license: "Apache License 2.0",
          modelfile: `FROM /root/.ollama/models/blobs/sha256-2bada8a7450677000f678be90653b85d364de7db25eb5ea54136ada5f3933730\n`,
          parameters:
            'stop                           "<|im_start|>"\nstop                           "<|im_end|>"',
          template: "{{ .Prompt }}",
          details: { parent_model: "", format: "gguf", family: "qwen2", parameter_size: "7.6B" },
          model_info: {
            "general.architecture": "qwen2",
            "general.parameter_count": 7_615_616_512,
            "qwen2.block_count": 28,
            "qwen2.context_length": tokens,
            "qwen2.embedding_length": 3584,
          },
          capabilities: ["completion", "tools"],
          modified_at: "2026-11-01T10:00:00.000000+00:00",
        }),
      };
    case "lmstudio":
      return {
        "GET /api/v0/models": json({
          object: "list",
          data: [
            {
              id: "text-embedding-nomic-embed-text-v1.5",
              object: "model",
              type: "embeddings",
              publisher: "nomic-ai",
              arch: "nomic-bert",
              compatibility_type: "gguf",
              quantization: "Q4_K_M",
              state: "not-loaded",
              max_context_length: 2048,
            },
            {
              id: model,
              object: "model",
              type: "llm",
              publisher: "lmstudio-community",
              arch: "qwen2",
              compatibility_type: "gguf",
              quantization: "Q4_K_M",
              state: "loaded",
              max_context_length: 32_768,
              loaded_context_length: tokens,
            },
          ],
        }),
      };
    case "none":
      return {};
  }
}
