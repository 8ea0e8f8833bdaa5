"""Training code for the vision models: crop augmentation and data (numpy, cv2), the torch
trainers (imported only by `cardtrack train`), calibration and the accuracy reports."""
