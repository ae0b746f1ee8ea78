"""The MLflow model of a trained model, as MLflow's "models from code" has it: MLflow copies this file
into each logged model and runs it to load the model (no pickled object). The model itself is
mtcue.reporting.logged_model.TranslatorModel."""
import mlflow.models

from mtcue.reporting.logged_model import TranslatorModel

mlflow.models.set_model(TranslatorModel())
