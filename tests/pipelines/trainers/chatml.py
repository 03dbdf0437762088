"""Shared by the trainer checks (each runs in a trainer's own venv): the small tokenizer trained on the
export, wrapped as a Hugging Face tokenizer with a ChatML chat template (the Qwen layout), saved to a
folder that `AutoTokenizer.from_pretrained` reads offline; or a model's own tokenizer folder as it is."""

import os

CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def tokenizer_dir(tokenizer_json: str, folder: str) -> str:
    """A folder `AutoTokenizer` reads: `tokenizer_json` itself when it is one already (a model's own tokenizer
    with its chat template), else the tokenizer.json wrapped with ChatML in `folder`."""
    from transformers import PreTrainedTokenizerFast

    if os.path.isdir(tokenizer_json):
        return tokenizer_json
    if not os.path.exists(os.path.join(folder, "tokenizer_config.json")):
        tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json, eos_token="<|im_end|>",
                                      pad_token="<|endoftext|>", additional_special_tokens=["<|im_start|>"])
        tok.chat_template = CHATML
        tok.save_pretrained(folder)
    return folder


def load(tokenizer_json: str, folder: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer_dir(tokenizer_json, folder))
