"""Jeong et al.'s style control: the style_token and style_dim models and the style_translation task."""
