#include "messages/codec.hpp"

#include <cstdint>
#include <string>

#include "engine/core/error.hpp"
#include "messages/control.capnp.h"
#include "messages/framing.hpp"
#include "messages/payload.capnp.h"
#include "messages/task.capnp.h"
#include "messages/tensor_codec.hpp"
#include "messages/update.capnp.h"

namespace drift::msg {
namespace {

using framing::finish;
using framing::parse;
using framing::read_u32_list;
using framing::write_list;

template <class Root, class Fill>
Buffer build_with_tensors(Fill&& fill) {
  capnp::MallocMessageBuilder message;
  TensorWriter writer(message);
  fill(message.template initRoot<Root>(), writer);
  return finish(message);
}

void write_payload(wire::Payload::Builder out, const Payload& payload, TensorWriter& writer) {
  auto tensors = out.initTensors(static_cast<unsigned>(payload.tensors.size()));
  unsigned i = 0;
  for (const auto& [name, value] : payload.tensors) writer.write(tensors[i++], name, value);

  auto families = out.initClassVectors(static_cast<unsigned>(payload.class_vectors.size()));
  i = 0;
  for (const auto& [name, per_class] : payload.class_vectors) {
    auto family = families[i++];
    family.setName(name);
    auto entries = family.initEntries(static_cast<unsigned>(per_class.size()));
    unsigned j = 0;
    for (const auto& [class_id, rows] : per_class) {
      entries[j].setClassId(class_id);
      writer.write(entries[j].initVectors(), "", rows);
      ++j;
    }
  }

  auto scalars = out.initScalars(static_cast<unsigned>(payload.scalars.size()));
  i = 0;
  for (const auto& [name, value] : payload.scalars) {
    scalars[i].setName(name);
    scalars[i].setValue(value);
    ++i;
  }
}

Payload read_payload(wire::Payload::Reader in, const BufferOwner& owner) {
  Payload out;
  for (auto t : in.getTensors()) {
    std::string name = t.getName();
    if (name.empty()) throw DecodeError("payload tensor without a name");
    auto value = read_tensor(t, owner, "payload tensor '" + name + "'");
    if (!out.tensors.emplace(name, std::move(value)).second)
      throw DecodeError("payload tensor '" + name + "' appears twice");
  }
  for (auto family : in.getClassVectors()) {
    std::string name = family.getName();
    if (name.empty()) throw DecodeError("payload class-vector family without a name");
    auto& per_class = out.class_vectors[name];
    for (auto entry : family.getEntries()) {
      const auto what = "class vectors '" + name + "' of class " + std::to_string(entry.getClassId());
      auto rows = read_tensor(entry.getVectors(), owner, what);
      if (rows.dim() != 2) throw DecodeError(what + " must be a [n, d] matrix");
      if (!per_class.emplace(entry.getClassId(), std::move(rows)).second) throw DecodeError(what + " appear twice");
    }
  }
  for (auto s : in.getScalars()) {
    std::string name = s.getName();
    if (name.empty()) throw DecodeError("payload scalar without a name");
    if (!out.scalars.emplace(name, s.getValue()).second)
      throw DecodeError("payload scalar '" + name + "' appears twice");
  }
  return out;
}

}  // namespace

Buffer encode_task(const TrainingTask& task) {
  return build_with_tensors<wire::TrainingTask>([&](wire::TrainingTask::Builder root, TensorWriter& writer) {
    root.setRound(task.round);
    root.setModelVersion(task.model_version);
    writer.write_bundle(root.initWeights(), task.weights);
    write_payload(root.initPayload(), task.payload, writer);
    auto h = root.initHyper();
    h.setLearningRate(task.hyper.learning_rate);
    h.setMomentum(task.hyper.momentum);
    h.setWeightDecay(task.hyper.weight_decay);
    h.setLocalEpochs(task.hyper.local_epochs);
    h.setLocalSteps(task.hyper.local_steps);
    if (task.hyper.max_steps > kMaxStepCut) throw std::logic_error("a step cut wider than the task's 16 bits");
    h.setMaxSteps(static_cast<std::uint16_t>(task.hyper.max_steps));
    h.setBatchSize(task.hyper.batch_size);
    h.setDropLast(task.hyper.drop_last);
    h.setPersistentPass(task.hyper.steps_pass == StepsPass::persistent);
    h.setGradClip(task.hyper.grad_clip);
  });
}

TrainingTask decode_task(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::TrainingTask>(
      buffer, limits, "training task", [](wire::TrainingTask::Reader root, const BufferOwner& owner) {
        TrainingTask task;
        task.round = root.getRound();
        task.model_version = root.getModelVersion();
        task.weights = read_bundle(root.getWeights(), owner);
        task.payload = read_payload(root.getPayload(), owner);
        const auto h = root.getHyper();
        task.hyper.learning_rate = h.getLearningRate();
        task.hyper.momentum = h.getMomentum();
        task.hyper.weight_decay = h.getWeightDecay();
        task.hyper.local_epochs = h.getLocalEpochs();
        task.hyper.local_steps = h.getLocalSteps();
        task.hyper.max_steps = h.getMaxSteps();
        task.hyper.batch_size = h.getBatchSize();
        task.hyper.drop_last = h.getDropLast();
        task.hyper.steps_pass = h.getPersistentPass() ? StepsPass::persistent : StepsPass::fresh;
        task.hyper.grad_clip = h.getGradClip();
        if (!(task.hyper.grad_clip >= 0.0)) throw DecodeError("negative or NaN gradient clip");
        if (task.hyper.batch_size == 0) throw DecodeError("batch size 0");
        return task;
      });
}

namespace {

void write_eval_result(wire::EvalResult::Builder root, const EvalResult& result) {
  root.setBegin(result.begin);
  root.setEnd(result.end);
  root.setLossSum(result.loss_sum);
  write_list(root.initCorrect(static_cast<unsigned>(result.correct.size())), result.correct);
  write_list(root.initCount(static_cast<unsigned>(result.count.size())), result.count);
}

EvalResult read_eval_result(wire::EvalResult::Reader root) {
  EvalResult r;
  r.begin = root.getBegin();
  r.end = root.getEnd();
  r.loss_sum = root.getLossSum();
  for (auto v : root.getCorrect()) r.correct.push_back(v);
  for (auto v : root.getCount()) r.count.push_back(v);
  if (r.correct.size() != r.count.size()) throw DecodeError("per-class lists differ in length");
  return r;
}

}  // namespace

Buffer encode_update(const ClientUpdate& update) {
  return build_with_tensors<wire::ClientUpdate>([&](wire::ClientUpdate::Builder root, TensorWriter& writer) {
    root.setClientId(update.client_id);
    root.setRound(update.round);
    root.setModelVersion(update.model_version);
    root.setNumSamples(update.num_samples);
    writer.write_bundle(root.initWeights(), update.weights);
    write_payload(root.initPayload(), update.payload, writer);
    auto m = root.initMetrics();
    m.setLoss(update.metrics.loss);
    m.setAccuracy(update.metrics.accuracy);
    m.setSteps(update.metrics.steps);
    m.setSamplesSeen(update.metrics.samples_seen);
    root.setHasPersonal(update.personal.has_value());
    if (update.personal) write_eval_result(root.initPersonal(), *update.personal);
  });
}

ClientUpdate decode_update(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::ClientUpdate>(buffer, limits, "client update",
                                   [](wire::ClientUpdate::Reader root, const BufferOwner& owner) {
                                     ClientUpdate u;
                                     u.client_id = root.getClientId();
                                     u.round = root.getRound();
                                     u.model_version = root.getModelVersion();
                                     u.num_samples = root.getNumSamples();
                                     u.weights = read_bundle(root.getWeights(), owner);
                                     u.payload = read_payload(root.getPayload(), owner);
                                     const auto m = root.getMetrics();
                                     u.metrics = {m.getLoss(), m.getAccuracy(), m.getSteps(), m.getSamplesSeen()};
                                     if (root.getHasPersonal()) u.personal = read_eval_result(root.getPersonal());
                                     return u;
                                   });
}

Buffer encode_bundle(const NamedTensors& tensors) {
  return build_with_tensors<wire::TensorBundle>(
      [&](wire::TensorBundle::Builder root, TensorWriter& writer) { writer.write_bundle(root, tensors); });
}

NamedTensors decode_bundle(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::TensorBundle>(
      buffer, limits, "tensor bundle",
      [](wire::TensorBundle::Reader root, const BufferOwner& owner) { return read_bundle(root, owner); });
}

Buffer encode_client_state(const ClientStateMessage& state) {
  return build_with_tensors<wire::ClientState>([&](wire::ClientState::Builder root, TensorWriter& writer) {
    root.setClientId(state.client_id);
    write_payload(root.initState(), state.state, writer);
  });
}

ClientStateMessage decode_client_state(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::ClientState>(buffer, limits, "client state",
                                  [](wire::ClientState::Reader root, const BufferOwner& owner) {
                                    return ClientStateMessage{root.getClientId(), read_payload(root.getState(), owner)};
                                  });
}

Buffer encode_eval_job(const EvalJob& job) {
  return build_with_tensors<wire::EvalJob>([&](wire::EvalJob::Builder root, TensorWriter&) {
    root.setModelVersion(job.model_version);
    root.setBegin(job.begin);
    root.setEnd(job.end);
    root.setPerSample(job.per_sample);
  });
}

EvalJob decode_eval_job(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EvalJob>(buffer, limits, "evaluation job", [](wire::EvalJob::Reader root, const BufferOwner&) {
    EvalJob job{root.getModelVersion(), root.getBegin(), root.getEnd(), root.getPerSample()};
    if (job.end < job.begin) throw DecodeError("evaluation range ends before it begins");
    return job;
  });
}

Buffer encode_eval_result(const EvalResult& result) {
  return build_with_tensors<wire::EvalReply>([&](wire::EvalReply::Builder root, TensorWriter&) {
    write_eval_result(root.initResult(), result);
    if (!result.hits.empty()) root.setHits(kj::arrayPtr(result.hits.data(), result.hits.size()));
  });
}

EvalResult decode_eval_result(const Buffer& buffer, const DecodeLimits& limits) {
  return parse<wire::EvalReply>(buffer, limits, "evaluation result",
                                [](wire::EvalReply::Reader root, const BufferOwner&) {
                                  auto r = read_eval_result(root.getResult());
                                  const auto hits = root.getHits();
                                  if (hits.size() != 0 && (r.end < r.begin || hits.size() != r.end - r.begin))
                                    throw DecodeError("per-sample hits do not cover the evaluated range");
                                  for (auto h : hits) {
                                    if (h > 1) throw DecodeError("a per-sample hit is neither 0 nor 1");
                                    r.hits.push_back(h);
                                  }
                                  return r;
                                });
}

}  // namespace drift::msg
