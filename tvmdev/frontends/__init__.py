"""Front ends: models made by training frameworks (``.tflite``; ``.onnx`` to come),
imported into the model description the rest of tvmdev reads."""
