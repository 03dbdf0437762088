from .task_configs import (
    TASK_CONFIGS,
    SCORE_DIMENSIONS,
    JUDGE_USER_PROMPT,
)
from .judge_parser import parse_judge_output, load_judge_system_prompts
from .output_parser import parse_model_output, clean_response_marker
