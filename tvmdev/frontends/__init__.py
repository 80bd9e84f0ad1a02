"""Front ends: models made by training frameworks (``.tflite``, ``.onnx``), imported
into the model (:class:`tvmdev.model.graph.Model`) the rest of tvmdev reads."""
