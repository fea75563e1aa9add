// The translation unit that owns drift's precompiled LibTorch header (cmake/torch_pch.cmake).
